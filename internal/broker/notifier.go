package broker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Notifier is Notify for a process that notifies on every request it
// accepts (the producer). The first notice pushes its token at once, as
// Notify does; notices that arrive while a push is on its way to Redis are
// gathered and go together in the next push, a single LPUSH of up to
// wakeListMax tokens. So a burst of N accepted messages costs one command
// per round trip rather than N, and still wakes as many idle workers as
// the wake list could hold tokens for, with a token for every queue that
// had news (a queue's token is never crowded out by another queue's).
//
// A request whose notice joins another's push returns at once; the request
// that pushes takes at most two pushes (its own and the notices gathered
// meanwhile) and hands what arrives after them to a goroutine, so no
// request waits on a stream of others. Pushes are best effort, as Notify's:
// the tasks are stored already and workers poll anyway.
type Notifier struct {
	rdb  redis.Cmdable
	list string

	mu      sync.Mutex
	pending []string // tokens not pushed yet, at most wakeListMax
	busy    bool     // a push is on its way; it takes pending after it
}

// notifyTimeout bounds one push: it runs on behalf of requests that may
// have ended.
const notifyTimeout = time.Second

// NewNotifier returns a Notifier for the Telegram workers' wake list.
func NewNotifier(rdb redis.Cmdable) *Notifier {
	return &Notifier{rdb: rdb, list: keys.WakeList()}
}

// Notify tells idle workers that queue has a new task. Its error is the
// push's that carried this notice when this call made it, else nil.
func (n *Notifier) Notify(ctx context.Context, queue string) error {
	n.mu.Lock()
	n.pending = addToken(n.pending, queue)
	if n.busy {
		n.mu.Unlock()
		return nil
	}
	n.busy = true
	ctx = context.WithoutCancel(ctx)
	var err error
	for round := 0; round < 2; round++ {
		tokens := n.pending
		n.pending = nil
		n.mu.Unlock()
		e := n.push(ctx, tokens)
		if round == 0 {
			err = e
		}
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.busy = false
			n.mu.Unlock()
			return err
		}
	}
	n.mu.Unlock()
	go n.drain(ctx)
	return err
}

// drain pushes what is gathered until nothing is left, then lets the next
// notice push again.
func (n *Notifier) drain(ctx context.Context) {
	n.mu.Lock()
	for len(n.pending) > 0 {
		tokens := n.pending
		n.pending = nil
		n.mu.Unlock()
		_ = n.push(ctx, tokens)
		n.mu.Lock()
	}
	n.busy = false
	n.mu.Unlock()
}

// push sends tokens in one LPUSH, with the trim Notify makes every
// trimEvery tokens of this process (the count is Notify's), so the list
// stays within MaxWakeTokens per process.
func (n *Notifier) push(ctx context.Context, tokens []string) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	vals := make([]any, len(tokens))
	for i, t := range tokens {
		vals[i] = t
	}
	k := uint64(len(tokens))
	after := notices.Add(k)
	if after/trimEvery == (after-k)/trimEvery {
		return n.rdb.LPush(ctx, n.list, vals...).Err()
	}
	_, err := n.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, n.list, vals...)
		p.LTrim(ctx, n.list, 0, wakeListMax-1)
		return nil
	})
	return err
}

// addToken adds a token for queue to tokens, which keeps at most
// wakeListMax: when full, a queue without a token takes the place of the
// newest token of a queue that holds more than one, and a queue that has
// one already adds nothing (more tokens than the list keeps wake nobody).
func addToken(tokens []string, queue string) []string {
	if len(tokens) < wakeListMax {
		return append(tokens, queue)
	}
	if slices.Contains(tokens, queue) {
		return tokens
	}
	for i := len(tokens) - 1; i >= 0; i-- {
		if slices.Index(tokens, tokens[i]) != i {
			tokens[i] = queue
			return tokens
		}
	}
	return tokens
}
