// Package wake removes asynq's polling delay.
//
// asynq's processor polls: when every queue is empty it sleeps about
// TaskCheckInterval before it asks Redis again, and moves due retries back to
// their queues on a timer of its own. Herald instead runs the processor with a
// tiny TaskCheckInterval and installs a go-redis hook on the worker's Redis
// client. When a dequeue round finds every queue empty, the hook holds the
// round until there is news: a producer's publish on keys.WakeChannel, a
// forward of due tasks seen on the same client, a local Wake call (a deferred
// task made due), or MaxIdle elapsing. An idle worker thus costs a few Redis
// commands per MaxIdle, and a new message is picked up within milliseconds.
//
// The hook also remembers which queues were found empty and answers their
// dequeue calls itself, without a round trip, until news for that queue
// arrives or MaxIdle passes. Tasks that reach a queue without news (asynq's
// recoverer, a client that does not publish) are therefore seen within
// MaxIdle at worst.
package wake

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Waker holds idle dequeue rounds and releases them on news.
type Waker struct {
	queues  map[string]bool
	maxIdle time.Duration
	ch      chan struct{}
	quit    chan struct{}
	once    sync.Once

	mu    sync.Mutex
	seen  map[string]bool
	empty map[string]time.Time // queue -> known empty until
	news  uint64               // counts news; a dequeue that raced with news proves nothing
	last  string               // queue of the latest news, "" when unknown
	now   func() time.Time
}

// New returns a Waker for a worker serving queues. maxIdle bounds how long an
// idle round is held (default 1s).
func New(queues []string, maxIdle time.Duration) *Waker {
	if maxIdle <= 0 {
		maxIdle = time.Second
	}
	w := &Waker{queues: map[string]bool{}, maxIdle: maxIdle, ch: make(chan struct{}, 1),
		quit: make(chan struct{}), seen: map[string]bool{}, empty: map[string]time.Time{}, now: time.Now}
	for _, q := range queues {
		w.queues[q] = true
	}
	return w
}

// Wake releases a held round, or the next one if none is held, and forgets
// which queues were empty.
func (w *Waker) Wake() {
	w.mu.Lock()
	clear(w.empty)
	w.news++
	w.last = ""
	w.mu.Unlock()
	w.signal()
}

// WakeQueue is Wake for news about one queue.
func (w *Waker) WakeQueue(queue string) {
	w.mu.Lock()
	delete(w.empty, queue)
	w.news++
	w.last = queue
	w.mu.Unlock()
	w.signal()
}

func (w *Waker) signal() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Close releases any held round and stops holding rounds.
func (w *Waker) Close() { w.once.Do(func() { close(w.quit) }) }

// Subscribe subscribes to keys.WakeChannel and waits for Redis to confirm,
// so no publish made after it returns is missed.
func Subscribe(ctx context.Context, rdb redis.UniversalClient) (*redis.PubSub, error) {
	sub := rdb.Subscribe(ctx, keys.WakeChannel)
	if _, err := sub.Receive(ctx); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// Listen forwards publishes on sub to Wake until ctx ends, then closes sub.
// go-redis resubscribes by itself after a lost connection.
func (w *Waker) Listen(ctx context.Context, sub *redis.PubSub) {
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if w.queues[m.Payload] {
				w.WakeQueue(m.Payload)
			} else {
				w.Wake()
			}
		}
	}
}

// Hook returns the go-redis hook to add to the Redis client handed to asynq.
func (w *Waker) Hook() redis.Hook { return hook{w} }

type hook struct{ w *Waker }

func (h hook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		kind, queue := classify(cmd)
		switch kind {
		case dequeue:
			known, news := h.w.knownEmpty(queue)
			if known {
				// Answer for Redis: the queue had no news since it was empty.
				return h.held(ctx, next, cmd, queue, h.w.afterDequeue(queue, true, news), redis.Nil)
			}
			err := next(ctx, cmd)
			return h.held(ctx, next, cmd, queue, h.w.afterDequeue(queue, err == redis.Nil, news), err)
		case forward:
			err := next(ctx, cmd)
			if n, ok := cmd.(*redis.Cmd); ok {
				if v, _ := n.Int64(); v > 0 {
					h.w.WakeQueue(queue)
				}
			}
			return err
		}
		return next(ctx, cmd)
	}
}

// held finishes a dequeue call. When the round was held and news for queue
// woke ended it, the call dequeues from woke at once, instead of answering
// empty and letting asynq sleep before its next round (a sub-millisecond
// sleep costs about a millisecond in Go).
func (h hook) held(ctx context.Context, next redis.ProcessHook, cmd redis.Cmder, queue, woke string, err error) error {
	if woke == "" {
		if errors.Is(err, redis.Nil) {
			cmd.SetErr(redis.Nil)
		}
		return err
	}
	retarget(cmd, queue, woke)
	cmd.SetErr(nil)
	news := h.w.newsCount()
	err = next(ctx, cmd)
	// The answer is final: if woke turned out empty the next round, after
	// asynq's short sleep, looks again.
	h.w.record(woke, errors.Is(err, redis.Nil), news)
	return err
}

type scriptKind int

const (
	other scriptKind = iota
	dequeue
	forward
)

// classify recognises asynq's dequeue and forward scripts by their keys:
// dequeue runs on (pending, paused, active, lease) of one queue; forward on
// (scheduled or retry, pending). Key names are asynq's stable layout
// "asynq:{queue}:...".
func classify(cmd redis.Cmder) (scriptKind, string) {
	name := cmd.Name()
	if name != "evalsha" && name != "eval" {
		return other, ""
	}
	args := cmd.Args()
	if len(args) < 5 {
		return other, ""
	}
	k1, _ := args[3].(string)
	k2, _ := args[4].(string)
	switch {
	case strings.HasSuffix(k1, ":pending") && strings.HasSuffix(k2, ":paused"):
		return dequeue, queueOf(k1)
	case (strings.HasSuffix(k1, ":scheduled") || strings.HasSuffix(k1, ":retry")) && strings.HasSuffix(k2, ":pending"):
		return forward, queueOf(k1)
	}
	return other, ""
}

func queueOf(key string) string {
	i := strings.IndexByte(key, '{')
	j := strings.IndexByte(key, '}')
	if i < 0 || j < i {
		return ""
	}
	return key[i+1 : j]
}

// afterDequeue tracks one dequeue round: asynq's processor asks each queue in
// turn from a single goroutine, so once every served queue answered empty the
// round is over, and the hook holds it until there is news.
// knownEmpty reports whether queue is known to be empty, and the news count
// to hand to afterDequeue.
func (w *Waker) knownEmpty(queue string) (bool, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	until, ok := w.empty[queue]
	return ok && w.now().Before(until), w.news
}

func (w *Waker) newsCount() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.news
}

// retarget points a dequeue command of queue from at queue to instead. The
// script's keys and task key prefix all start with asynq's "asynq:{queue}:";
// the task it returns carries its own queue name, which is what asynq uses
// from then on.
func retarget(cmd redis.Cmder, from, to string) {
	if from == to {
		return
	}
	oldPrefix, newPrefix := "asynq:{"+from+"}:", "asynq:{"+to+"}:"
	args := cmd.Args()
	for i := 3; i < len(args); i++ {
		if s, ok := args[i].(string); ok && strings.HasPrefix(s, oldPrefix) {
			args[i] = newPrefix + strings.TrimPrefix(s, oldPrefix)
		}
	}
}

// record notes a dequeue's result without holding the round.
func (w *Waker) record(queue string, empty bool, news uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !empty {
		clear(w.seen)
		delete(w.empty, queue)
		return
	}
	if w.news == news {
		w.empty[queue] = w.now().Add(w.maxIdle)
	}
}

// afterDequeue records a dequeue's result; news is the news count from
// before the dequeue ran. If news arrived meanwhile, an empty answer may be
// stale: the queue is not marked empty and the round is not held. When the
// round is held and news for a served queue ends it, that queue is returned.
func (w *Waker) afterDequeue(queue string, empty bool, news uint64) string {
	w.mu.Lock()
	if !empty {
		clear(w.seen)
		delete(w.empty, queue)
		w.mu.Unlock()
		return ""
	}
	if w.news != news {
		clear(w.seen)
		w.mu.Unlock()
		return ""
	}
	if until, ok := w.empty[queue]; !ok || !w.now().Before(until) {
		w.empty[queue] = w.now().Add(w.maxIdle)
	}
	w.seen[queue] = true
	idle := len(w.seen) >= len(w.queues)
	if idle {
		clear(w.seen)
	}
	w.mu.Unlock()
	if !idle {
		return ""
	}
	t := time.NewTimer(w.maxIdle)
	defer t.Stop()
	select {
	case <-w.ch:
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.queues[w.last] {
			return w.last
		}
	case <-t.C:
	case <-w.quit:
	}
	return ""
}
