package broker

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Waker holds idle dequeue rounds and releases them on news.
type Waker struct {
	queues  map[string]bool
	maxIdle time.Duration
	rdb     redis.UniversalClient // for the blocking pop and inbox pushes
	inbox   string
	list    string        // the wake list producers push tokens on
	ch      chan struct{} // a local token: news while no round is held
	quit    chan struct{}
	once    sync.Once
	holding bool        // a round is blocked in the pop (guarded by mu)
	popping atomic.Bool // a blocking pop has not returned yet

	mu    sync.Mutex
	seen  map[string]bool
	empty map[string]time.Time // queue -> known empty until
	news  uint64               // counts news; a dequeue that raced with news proves nothing
	last  string               // queue of the latest news, "" when unknown
	now   func() time.Time
}

// NewWaker returns a Waker for a worker serving queues. maxIdle bounds how
// long a queue found empty is answered empty without news (default
// DefaultMaxIdle, as for ServerConfig);
// an idle round is held in Redis for at most popBlock of it. id names the
// worker's inbox (unique per process). Call SetClient before the hook sees
// traffic.
func NewWaker(queues []string, maxIdle time.Duration, id string) *Waker {
	if maxIdle <= 0 {
		maxIdle = DefaultMaxIdle
	}
	w := &Waker{queues: map[string]bool{}, maxIdle: maxIdle, inbox: keys.WakeInbox(id), list: keys.WakeList(), ch: make(chan struct{}, 1),
		quit: make(chan struct{}), seen: map[string]bool{}, empty: map[string]time.Time{}, now: time.Now}
	for _, q := range queues {
		w.queues[q] = true
	}
	return w
}

// SetClient gives the Waker the client it blocks on: the hooked client
// itself is fine (the hook passes non-dequeue commands through).
func (w *Waker) SetClient(rdb redis.UniversalClient) { w.rdb = rdb }

// WakeQueue releases a held round (or the next one) with news about queue,
// and forgets that queue's empty mark.
func (w *Waker) WakeQueue(queue string) {
	w.mu.Lock()
	delete(w.empty, queue)
	w.news++
	w.last = queue
	w.mu.Unlock()
	w.signal(queue)
}

// signal ends the held round: through the inbox when a round is blocked in
// Redis, else with a local token the next round takes before blocking.
func (w *Waker) signal(queue string) {
	select {
	case w.ch <- struct{}{}:
	default:
	}
	w.mu.Lock()
	holding := w.holding
	w.mu.Unlock()
	if holding && w.rdb != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _ = w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.LPush(ctx, w.inbox, queue)
			p.Expire(ctx, w.inbox, time.Minute)
			return nil
		})
	}
}

// Close releases any held round and stops holding rounds.
func (w *Waker) Close() {
	w.once.Do(func() {
		close(w.quit)
		w.signal("")
	})
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
			if !known && h.w.markRanOut(queue) {
				known = h.w.lookAgain(ctx, queue, news)
			}
			if known {
				// Answer for Redis: the queue had no news since it was empty.
				return h.held(ctx, next, cmd, queue, h.w.afterDequeue(queue, true, news), redis.Nil)
			}
			err := next(ctx, cmd)
			if unreachable(ctx, err) {
				// The queue's node did not answer (it is down, failing over or
				// refusing writes). asynq would end the whole round on this
				// error, so tasks of queues on healthy nodes would wait too:
				// skip this queue for troubleWait and let the round go on.
				h.w.skip(queue, troubleWait)
				cmd.SetErr(redis.Nil)
				return h.held(ctx, next, cmd, queue, h.w.afterDequeue(queue, true, news), redis.Nil)
			}
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
	left, err := h.w.dequeueCounting(ctx, next, cmd, woke)
	// The answer is final: if woke turned out empty the next round, after
	// asynq's short sleep, looks again.
	h.w.record(woke, errors.Is(err, redis.Nil), left == 0, news)
	return err
}

// dequeueCounting runs a woken dequeue of queue together with an LLEN of its
// pending list, in one pipeline (one round trip), and returns how many tasks
// the list held after the dequeue took one (-1 when unknown: either failed,
// or the queue was empty). asynq asks for the next
// task as soon as it has one; when the news was about the task just taken,
// that call would find the queue empty, at the cost of a round trip and
// three commands (EVALSHA, EXISTS, RPOPLPUSH). The LLEN costs one and tells
// beforehand. It runs after the dequeue, so a task it misses was pushed
// after it, and the news of that task comes later still: a token the next
// held round takes, or a WakeQueue that record sees in the news count.
func (w *Waker) dequeueCounting(ctx context.Context, next redis.ProcessHook, cmd redis.Cmder, queue string) (int64, error) {
	if w.rdb == nil {
		return -1, next(ctx, cmd)
	}
	var n *redis.IntCmd
	_, _ = w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		_ = p.Process(ctx, cmd)
		n = p.LLen(ctx, PendingKey(queue))
		return nil
	})
	if err := cmd.Err(); err != nil || n.Err() != nil {
		return -1, err
	}
	return n.Val(), nil
}

// knownEmpty reports whether queue is known to be empty, and the news count
// to hand to afterDequeue.
func (w *Waker) knownEmpty(queue string) (bool, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	until, ok := w.empty[queue]
	return ok && w.now().Before(until), w.news
}

// unreachable reports whether a dequeue's error means that its queue's
// node cannot serve it now. NOSCRIPT is left to go-redis, which loads the
// script and runs it again; a context that ended is the caller's.
func unreachable(ctx context.Context, err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || ctx.Err() != nil {
		return false
	}
	return !strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// skip answers queue's dequeues empty for d, unless news for it comes.
func (w *Waker) skip(queue string, d time.Duration) {
	w.mu.Lock()
	w.empty[queue] = w.now().Add(d)
	w.mu.Unlock()
}

// markRanOut reports whether queue's empty mark is there but has run out:
// MaxIdle passed without news for the queue.
func (w *Waker) markRanOut(queue string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	until, ok := w.empty[queue]
	return ok && !w.now().Before(until)
}

// lookAgain is the MaxIdle look at a queue found empty before, for tasks
// that came without news: one LLEN of its pending list instead of asynq's
// dequeue script (EVALSHA, EXISTS, RPOPLPUSH), on every served queue every
// MaxIdle. When the list is still empty and no news came meanwhile, the
// mark is renewed and it reports true: the call is answered empty. Tasks
// there (or a failed look) let the dequeue go to Redis.
func (w *Waker) lookAgain(ctx context.Context, queue string, news uint64) bool {
	if w.rdb == nil {
		return false
	}
	n, err := w.rdb.LLen(ctx, PendingKey(queue)).Result()
	if err != nil || n > 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.news != news {
		return false
	}
	w.empty[queue] = w.now().Add(w.maxIdle)
	return true
}

func (w *Waker) newsCount() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.news
}

// record notes a dequeue's result without holding the round: empty when it
// found no task, drained when it took one and the queue was empty after it.
// Either marks the queue empty, unless news arrived since news was read.
func (w *Waker) record(queue string, empty, drained bool, news uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !empty {
		clear(w.seen)
		delete(w.empty, queue)
		w.busy()
		if !drained {
			return
		}
	}
	if w.news == news {
		w.empty[queue] = w.now().Add(w.maxIdle)
	}
}

// busyRecheck is how long a queue found empty is answered empty, without
// news, by a worker that is busy with other queues' tasks.
//
// Producers' news reaches idle workers only: a worker working through a
// backlog (a broadcast's 100,000 messages) never takes a token from the
// wake list, so its empty marks alone would keep a critical message
// waiting up to MaxIdle. A busy worker therefore looks at each queue it
// believes empty again after busyRecheck (one LLEN, see lookAgain): at
// most ten commands a second per queue, on a worker that sends many
// times that, and nothing on an idle one.
const busyRecheck = 100 * time.Millisecond

// busy shortens the empty marks to busyRecheck: a dequeue just took a
// task. w.mu must be held.
func (w *Waker) busy() {
	soon := w.now().Add(busyRecheck)
	for q, until := range w.empty {
		if until.After(soon) {
			w.empty[q] = soon
		}
	}
}

// afterDequeue records a dequeue's result; news is the news count from
// before the dequeue ran. asynq's processor asks each queue in turn from a
// single goroutine, so once every served queue answered empty the round is
// over, and the hook holds it until there is news. If news arrived meanwhile, an empty answer may be
// stale: the queue is not marked empty and the round is not held. When the
// round is held and news for a served queue ends it, that queue is returned.
func (w *Waker) afterDequeue(queue string, empty bool, news uint64) string {
	w.mu.Lock()
	if !empty {
		clear(w.seen)
		delete(w.empty, queue)
		w.busy()
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
	return w.hold()
}

// hold blocks an idle round until news or MaxIdle, and returns the queue the
// news was about ("" when unknown or on timeout).
func (w *Waker) hold() string {
	select {
	case <-w.quit:
		return ""
	case <-w.ch: // news arrived while no round was held
		return w.lastServed()
	default:
	}
	if w.rdb == nil {
		return w.holdLocal(w.maxIdle)
	}
	w.mu.Lock()
	w.holding = true
	w.mu.Unlock()
	// News that came between the check above and holding=true left a local
	// token only; look once more before blocking in Redis.
	select {
	case <-w.ch:
		w.setHolding(false)
		return w.lastServed()
	default:
	}
	res, err := w.pop(min(w.maxIdle, popBlock))
	w.setHolding(false)
	// The local token of news that arrived while blocked is spent with it.
	select {
	case <-w.ch:
	default:
	}
	switch {
	case errors.Is(err, redis.Nil):
		return "" // popBlock passed: the next round is answered from the empty marks
	case err != nil:
		// Redis trouble (a node down or hung, a failover): producers' news
		// may not reach this worker until the wake list's slot has moved,
		// so forget the empty marks (the next round asks each queue) and
		// wait locally, but not a whole MaxIdle, so that the worker finds
		// the new primary's tasks within a second or two of its promotion.
		w.mu.Lock()
		clear(w.empty)
		w.mu.Unlock()
		return w.holdLocal(min(w.maxIdle, troubleWait))
	}
	queue := res[1]
	if !w.queues[queue] {
		return w.lastServed()
	}
	if res[0] == w.list {
		// A producer's token: forget that queue's empty mark.
		w.mu.Lock()
		delete(w.empty, queue)
		w.news++
		w.last = queue
		w.mu.Unlock()
	}
	return queue
}

// How long one blocking pop of an idle round lasts, and how much longer
// its answer is waited for. A round ends after popBlock (the empty marks
// answer the next one without a round trip, so an idle worker sends one
// BLPOP a second); a node that hangs rather than refusing (SIGSTOP, a host
// gone from the network) keeps the pop until go-redis's read deadline,
// popBlock plus 10 s, so the round stops waiting for it after
// popBlock+popGrace and goes on with the queues, wherever they now live.
const (
	popBlock = time.Second
	popGrace = 500 * time.Millisecond
)

// errPopStuck answers an idle round whose blocking pop did not return in
// time, or whose previous pop has still not returned.
var errPopStuck = errors.New("broker: blocking pop on the wake list did not return")

// pop runs the blocking pop of an idle round for at most block, and waits
// for it at most block+popGrace. A token that a pop given up on takes
// later is not lost: it becomes local news.
func (w *Waker) pop(block time.Duration) ([]string, error) {
	if !w.popping.CompareAndSwap(false, true) {
		return nil, errPopStuck // the previous pop still hangs on its node
	}
	type answer struct {
		res []string
		err error
	}
	got, gone := make(chan answer), make(chan struct{})
	go func() {
		defer w.popping.Store(false)
		res, err := w.rdb.BLPop(context.Background(), block, w.list, w.inbox).Result()
		select {
		case got <- answer{res, err}:
		case <-gone:
			if err == nil && len(res) == 2 {
				w.WakeQueue(res[1])
			}
		}
	}()
	t := time.NewTimer(block + popGrace)
	defer t.Stop()
	select {
	case a := <-got:
		return a.res, a.err
	case <-t.C:
		close(gone)
		return nil, errPopStuck
	}
}

func (w *Waker) setHolding(v bool) {
	w.mu.Lock()
	w.holding = v
	w.mu.Unlock()
}

// troubleWait is how long an idle round waits locally when its blocking
// pop in Redis failed.
const troubleWait = time.Second

// holdLocal waits for local news, for at most d.
func (w *Waker) holdLocal(d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ch:
		return w.lastServed()
	case <-t.C:
	case <-w.quit:
	}
	return ""
}

func (w *Waker) lastServed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queues[w.last] {
		return w.last
	}
	return ""
}
