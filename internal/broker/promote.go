package broker

import (
	"container/heap"
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/backoff"
	"github.com/redis/go-redis/v9"
)

// promoteScript moves one task from its queue's retry set to the front of the
// pending list, so a task whose reserved slot has come is the next one a
// worker picks up (asynq's own forwarder has one-second resolution and
// appends to the back). The contract test pins the retry set, the head of
// pending and the hash fields against the real asynq.
//
// KEYS[1] asynq:{q}:t:<id>, KEYS[2] asynq:{q}:retry, KEYS[3] asynq:{q}:pending.
// ARGV[1] task id, ARGV[2] now in unix nanoseconds.
// Returns 1 when moved, 0 when the task was not in the retry set (membership
// of the set is the task's retry state).
var promoteScript = redis.NewScript(`
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending', 'pending_since', ARGV[2])
return 1
`)

// promoter returns deferred tasks to their queue at their due time. Each
// worker process promotes the tasks it deferred; if the process dies, asynq's
// forwarder moves them within about 21 seconds (forwardInterval plus the
// retry score, rounded up so that it never moves them early).
type promoter struct {
	rdb  redis.Scripter
	wake func(queue string)
	log  *slog.Logger

	mu    sync.Mutex
	items dueHeap
	kick  chan struct{}
}

type dueItem struct {
	at    time.Time
	queue string
	id    string
	tries int
}

type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// newPromoter returns a promoter that runs its script on rdb and calls wake
// with the queue of each task it moved.
func newPromoter(rdb redis.Scripter, wake func(queue string), log *slog.Logger) *promoter {
	return &promoter{rdb: rdb, wake: wake, log: log, kick: make(chan struct{}, 1)}
}

// PromoteAt asks for task id of queue, which the caller hands back to asynq
// as a retry (its handler returns an error with backstopDelay), to be made
// pending again, at the head of its queue, at at: the task snoozes until
// then.
func (p *promoter) PromoteAt(queue, id string, at time.Time) {
	p.mu.Lock()
	heap.Push(&p.items, dueItem{at: at, queue: queue, id: id})
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run promotes due tasks until ctx ends.
func (p *promoter) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		p.mu.Lock()
		var next time.Duration = time.Hour
		if len(p.items) > 0 {
			next = time.Until(p.items[0].at)
		}
		p.mu.Unlock()
		if next <= 0 {
			p.promoteDue(ctx)
			continue
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// promote runs promoteScript for one task.
func (p *promoter) promote(ctx context.Context, it dueItem, now time.Time) (int, error) {
	return promoteScript.Run(ctx, p.rdb,
		[]string{taskKey(it.queue, it.id), retryKey(it.queue), PendingKey(it.queue)},
		it.id, strconv.FormatInt(now.UnixNano(), 10)).Int()
}

// HandOver is called at shutdown, once this process takes no more tasks: it
// returns every task it was holding a promotion for to its queue at once and
// wakes other workers, which then take over the waiting (each task still
// holds its reservation, so it is deferred again to the same slot).
func (p *promoter) HandOver(ctx context.Context, notify func(ctx context.Context, queue string)) int {
	p.mu.Lock()
	items := p.items
	p.items = nil
	p.mu.Unlock()
	now := time.Now()
	moved := 0
	for _, it := range items {
		if n, err := p.promote(ctx, it, now); err == nil && n == 1 {
			moved++
			notify(ctx, it.queue)
		}
	}
	return moved
}

// A task not in the retry set yet is looked for notYetTries more times,
// notYetWait apart at first, doubling up to 32 times that: about 3.8 s in
// all, before it is left to asynq's forwarder.
const (
	notYetTries   = 10
	notYetWait    = 20 * time.Millisecond
	notYetMaxWait = 32 * notYetWait
)

func (p *promoter) promoteDue(ctx context.Context) {
	now := time.Now()
	var due []dueItem
	p.mu.Lock()
	for len(p.items) > 0 && !p.items[0].at.After(now) {
		due = append(due, heap.Pop(&p.items).(dueItem))
	}
	p.mu.Unlock()
	moved := map[string]bool{}
	for i, it := range due {
		n, err := p.promote(ctx, it, now)
		if ctx.Err() != nil {
			// Stopping (the worker shuts down): what is not promoted yet
			// stays for HandOver, which returns it to its queue.
			p.mu.Lock()
			for _, rest := range due[i:] {
				if rest.id != it.id || n != 1 {
					heap.Push(&p.items, rest)
				}
			}
			p.mu.Unlock()
			if n == 1 {
				moved[it.queue] = true
			}
			break
		}
		switch {
		case err != nil && ctx.Err() == nil && it.tries < 5:
			// Redis hiccup: try again shortly; asynq's forwarder is the backstop.
			it.tries++
			it.at = now.Add(time.Duration(it.tries) * 100 * time.Millisecond)
			p.mu.Lock()
			heap.Push(&p.items, it)
			p.mu.Unlock()
		case err != nil:
			p.log.Warn("promote deferred task failed; asynq's forwarder will move it", "task_id", it.id, "queue", it.queue, "error", err)
		case n == 0 && it.tries < notYetTries && ctx.Err() == nil:
			// The processor may not have stored the task as retry yet: when
			// many tasks snooze at once (a shutdown wakes every waiting
			// one), asynq writes their retries one by one.
			it.tries++
			it.at = now.Add(backoff.Exp(notYetWait, notYetMaxWait, it.tries-1))
			p.mu.Lock()
			heap.Push(&p.items, it)
			p.mu.Unlock()
		case n == 1:
			moved[it.queue] = true
		}
	}
	for q := range moved {
		p.wake(q)
	}
}

// promoteChunk is how many promotions one pipeline of PromoteNow sends.
const promoteChunk = 500

// PromoteNow makes the tasks ids of queue that wait in its retry set (a
// snooze: a deferral for a slot, a retry's backoff) pending at once, at the
// head of the queue, and wakes a worker: what a cancel needs so that its
// marked tasks are settled now rather than when their slots would have
// come. Tasks not in the retry set (pending, held by a worker, settled) are
// left alone; the promoter of the worker that snoozed one finds it gone and
// does nothing. It returns how many it moved; the work is one script run
// per id, pipelined promoteChunk at a time.
func PromoteNow(ctx context.Context, rdb redis.UniversalClient, queue string, ids []string) (int, error) {
	moved := 0
	for start := 0; start < len(ids); start += promoteChunk {
		part := ids[start:min(start+promoteChunk, len(ids))]
		now := strconv.FormatInt(time.Now().UnixNano(), 10)
		cmds := make([]*redis.Cmd, 0, len(part))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range part {
				cmds = append(cmds, promoteScript.EvalSha(ctx, p, []string{taskKey(queue, id), retryKey(queue), PendingKey(queue)}, id, now))
			}
			return nil
		})
		if err != nil && !isNoScript(err) {
			return moved, err
		}
		for _, c := range cmds {
			if n, err := c.Int(); err == nil {
				moved += n
			}
		}
		if err != nil {
			// Redis does not hold the script yet (a new or failed-over
			// master): run them one by one, which loads it. Those already
			// moved answer 0.
			for _, id := range part {
				n, err := promoteScript.Run(ctx, rdb, []string{taskKey(queue, id), retryKey(queue), PendingKey(queue)}, id, now).Int()
				if err != nil {
					return moved, err
				}
				moved += n
			}
		}
	}
	if moved > 0 {
		_ = Notify(ctx, rdb, queue)
	}
	return moved, nil
}
