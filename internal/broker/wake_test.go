package broker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// dequeueCounter counts asynq dequeue scripts that actually reach Redis,
// alone or in a pipeline (the wake hook sends a woken round's with an LLEN),
// and the LLENs the wake hook sends.
type dequeueCounter struct{ n, llens atomic.Int64 }

func (c *dequeueCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *dequeueCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}
func (c *dequeueCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *dequeueCounter) count(cmd redis.Cmder) {
	if cmd.Name() == "llen" {
		c.llens.Add(1)
	}
	if name := cmd.Name(); name == "evalsha" || name == "eval" {
		if k, _ := cmd.Args()[3].(string); len(k) > 8 && k[len(k)-8:] == ":pending" {
			c.n.Add(1)
		}
	}
}

type bundle struct {
	mr      *miniredis.Miniredis
	rdb     *redis.Client
	client  *asynq.Client
	handled chan string
	counter *dequeueCounter
	waker   *broker.Waker
}

// setup runs an asynq server whose Redis client carries the wake hook, with
// an idle bound far longer than any test wait: a task handled quickly was
// picked up because of news, not because a poll came round.
func setup(t *testing.T) *bundle {
	t.Helper()
	return setupIdle(t, time.Minute)
}

// setupIdle is setup with maxIdle as the idle bound.
func setupIdle(t *testing.T, maxIdle time.Duration) *bundle {
	t.Helper()
	return setupWith(t, wakeSetup{maxIdle: maxIdle})
}

// wakeSetup varies setupWith's server: hooks around the wake hook
// (outer ones see what asynq sees, inner ones what Redis answers) and
// strict priority among the queues.
type wakeSetup struct {
	maxIdle      time.Duration
	outer, inner []redis.Hook
	strict       bool
	// slowLow is how long the handler takes over a task of the queue low.
	slowLow time.Duration
}

func setupWith(t *testing.T, o wakeSetup) *bundle {
	t.Helper()
	mr := miniredis.RunT(t)
	queues := []string{"critical", "default", "low"}
	w := broker.NewWaker(queues, o.maxIdle, t.Name())
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	counter := &dequeueCounter{}
	for _, h := range o.outer {
		rdb.AddHook(h)
	}
	rdb.AddHook(w.Hook())
	rdb.AddHook(counter)
	for _, h := range o.inner {
		rdb.AddHook(h)
	}
	w.SetClient(rdb)
	t.Cleanup(func() { _ = rdb.Close() })
	handled := make(chan string, 256)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 2, Queues: map[string]int{"critical": 6, "default": 3, "low": 1}, StrictPriority: o.strict,
		TaskCheckInterval: 100 * time.Microsecond, DelayedTaskCheckInterval: time.Minute,
		LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		q, _ := asynq.GetQueueName(ctx)
		if q == "low" {
			time.Sleep(o.slowLow)
		}
		handled <- q + ":" + string(t.Payload())
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Close()
		srv.Shutdown()
	})
	client := asynq.NewClientFromRedisClient(rdb)
	return &bundle{mr: mr, rdb: rdb, client: client, handled: handled, counter: counter, waker: w}
}

func (b *bundle) enqueue(t *testing.T, queue, payload string, publish bool) {
	t.Helper()
	if _, err := b.client.Enqueue(asynq.NewTask("x", []byte(payload)), asynq.Queue(queue)); err != nil {
		t.Fatal(err)
	}
	if publish {
		if err := broker.Notify(context.Background(), b.rdb, queue); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *bundle) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-b.handled:
		if got != want {
			t.Fatalf("handled %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%q not handled: the wake-up did not arrive", want)
	}
}

// waitIdle waits until the processor's round is held: no dequeue reaches
// Redis any more. Nothing signals that state, so it is observed.
func (b *bundle) waitIdle(t *testing.T) {
	t.Helper()
	last := b.counter.n.Load()
	for stable := 0; stable < 5; {
		time.Sleep(20 * time.Millisecond)
		if n := b.counter.n.Load(); n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
}

func TestNotifyWakesAHeldRound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, q := range []string{"default", "critical", "low", "default"} {
		b.waitIdle(t)
		b.enqueue(t, q, "m-"+q, true)
		b.expect(t, q+":m-"+q)
	}
}

func TestIdleWorkerSendsNoDequeues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.waitIdle(t)
	before := b.counter.n.Load()
	time.Sleep(300 * time.Millisecond)
	if n := b.counter.n.Load() - before; n != 0 {
		t.Fatalf("%d dequeue commands reached Redis while idle, want 0", n)
	}
}

// TestIdleLooksAreOneLLEN: every MaxIdle an idle worker looks at each
// queue for tasks that came without news with one LLEN, not asynq's dequeue
// script; a task that came without news is found by such a look.
func TestIdleLooksAreOneLLEN(t *testing.T) {
	t.Parallel()
	// The blocking pop that holds an idle round counts whole seconds.
	const maxIdle = time.Second
	b := setupIdle(t, maxIdle)
	b.waitIdle(t)
	dequeues, llens := b.counter.n.Load(), b.counter.llens.Load()
	time.Sleep(3 * maxIdle)
	if n := b.counter.n.Load() - dequeues; n != 0 {
		t.Fatalf("%d dequeue scripts reached Redis in 3 idle bounds, want 0", n)
	}
	// 3 queues, each looked at once per bound.
	if n := b.counter.llens.Load() - llens; n < 3*2 {
		t.Fatalf("%d LLENs in 3 idle bounds, want a look at each of 3 queues every bound", n)
	}
	b.enqueue(t, "low", "without-news", false)
	b.expect(t, "low:without-news")
}

// TestBusyWorkerSeesNewQueues: a worker busy with one queue's backlog
// takes no token from the wake list, yet finds a task that came to a queue
// it had found empty within a fraction of a second, long before its idle
// bound, while the backlog is still there.
func TestBusyWorkerSeesNewQueues(t *testing.T) {
	t.Parallel()
	b := setupWith(t, wakeSetup{maxIdle: time.Minute, slowLow: 20 * time.Millisecond})
	b.waitIdle(t)
	const backlog = 100 // 1s of work for 2 handlers
	for i := range backlog {
		b.enqueue(t, "low", strconv.Itoa(i), i == 0)
	}
	// Two handlers take the backlog's first tasks together, so any of
	// them may finish first; what matters is that the backlog is running.
	select {
	case got := <-b.handled:
		if !strings.HasPrefix(got, "low:") {
			t.Fatalf("handled %q first, want a backlog task", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the backlog was not taken: the wake-up did not arrive")
	}
	b.enqueue(t, "critical", "urgent", false)
	for seen := 1; ; seen++ {
		got := <-b.handled
		if got == "critical:urgent" {
			if seen > backlog/2 {
				t.Errorf("the critical task was handled after %d of %d backlog tasks", seen, backlog)
			}
			return
		}
		if seen == backlog {
			t.Fatal("the whole backlog was handled before the critical task")
		}
	}
}

func TestLocalWakeQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.waitIdle(t)
	// A task that arrives without a publish (as after a local promotion) is
	// found once the process says so.
	b.enqueue(t, "low", "quiet", false)
	b.waitIdle(t)
	select {
	case got := <-b.handled:
		t.Fatalf("handled %q before any news: the round was not held", got)
	default:
	}
	b.waker.WakeQueue("low")
	b.expect(t, "low:quiet")
}

// fleet is a few worker processes (broker.NewServer, as Herald runs them,
// each on a client of its own, serving three queues) on a real
// redis-server, with a MaxIdle far longer than any test wait: a task
// handled at all was taken because of news, not because an idle bound ran
// out.
type fleet struct {
	rdb     *redis.Client // the producer's
	client  *asynq.Client
	handled chan string
}

func startFleet(t *testing.T, workers int) *fleet {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	f := &fleet{rdb: rdb, client: asynq.NewClientFromRedisClient(rdb), handled: make(chan string, 1024)}
	for range workers {
		s, err := broker.NewServer(srv.Client(t), broker.ServerConfig{
			Queues: map[string]int{"critical": 6, "default": 3, "low": 1}, Concurrency: 4,
			MaxIdle: time.Minute, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.Run(ctx, map[string]broker.Handler{"x": broker.HandlerFunc(func(_ context.Context, task broker.Task) error {
				f.handled <- string(task.Payload)
				return nil
			})}, nil)
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	// Each worker's first round asks Redis for every queue, and finds them
	// empty; the tests count from after those.
	deadline := time.Now().Add(20 * time.Second)
	for dequeues(t, rdb) < int64(3*workers) {
		if time.Now().After(deadline) {
			t.Fatal("the workers did not start dequeuing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f
}

// dequeues counts the runs of asynq's dequeue script on rdb's server: its
// RPOPLPUSH, which nothing else runs, counts once per run, whether it found
// a task or not (INFO commandstats counts the commands scripts call).
func dequeues(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	by, err := redistest.CommandCalls(context.Background(), rdb)
	if err != nil {
		t.Fatal(err)
	}
	return by["rpoplpush"]
}

// quiet waits until no dequeue has reached Redis for a while (every worker
// holds its round, or is answered locally) and returns the count.
func quiet(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	last := dequeues(t, rdb)
	for stable := 0; stable < 5; {
		time.Sleep(20 * time.Millisecond)
		if n := dequeues(t, rdb); n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	return last
}

// collect receives n handled payloads and fails on any seen twice.
func (f *fleet) collect(t *testing.T, n int, seen map[string]bool) {
	t.Helper()
	for range n {
		select {
		case p := <-f.handled:
			if seen[p] {
				t.Fatalf("task %s handled twice", p)
			}
			seen[p] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d tasks handled: the rest waited for MaxIdle", len(seen), n)
		}
	}
}

func (f *fleet) enqueue(t *testing.T, payload string, notify bool) {
	t.Helper()
	if _, err := f.client.Enqueue(asynq.NewTask("x", []byte(payload)), asynq.Queue("default")); err != nil {
		t.Fatal(err)
	}
	if notify {
		if err := broker.Notify(context.Background(), f.rdb, "default"); err != nil {
			t.Fatal(err)
		}
	}
}

// done checks that every task was handled once and no task is left.
func (f *fleet) done(t *testing.T, seen map[string]bool, n int) {
	t.Helper()
	select {
	case p := <-f.handled:
		t.Fatalf("task %s handled after all %d were", p, n)
	default:
	}
	if len(seen) != n {
		t.Fatalf("%d tasks handled, want %d", len(seen), n)
	}
	// asynq settles a task after its handler returned: wait for the last.
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p, a := f.rdb.LLen(ctx, broker.PendingKey("default")).Val(), f.rdb.LLen(ctx, broker.ActiveKey("default")).Val()
		if p == 0 && a == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks pending and %d active after all were handled", p, a)
		}
	}
}

// TestWakeOneDequeuePerNotifiedTask: S3's shape, tasks enqueued one at a
// time with news, each taken before the next arrives, by a fleet of three
// idle workers. Each task costs one run of asynq's dequeue script: the
// woken worker learns in the same round trip that the queue is now empty,
// and does not ask it again until there is news. (Each woken worker used to
// ask once more and find it empty: 2N runs.)
func TestWakeOneDequeuePerNotifiedTask(t *testing.T) {
	t.Parallel()
	const n = 100
	f := startFleet(t, 3)
	before := quiet(t, f.rdb)
	seen := map[string]bool{}
	for i := range n {
		f.enqueue(t, fmt.Sprint("p", i), true)
		f.collect(t, 1, seen)
	}
	runs := quiet(t, f.rdb) - before
	f.done(t, seen, n)
	t.Logf("%d tasks, %d dequeue script runs", n, runs)
	if runs > n+2 {
		t.Errorf("%d tasks took %d runs of the dequeue script, want at most %d", n, runs, n+2)
	}
}

// TestWakeDrainsABacklogOnOneToken: tasks that reach the queue without news
// while the fleet is idle are all taken after a single token, as soon as it
// comes: the worker it wakes sees the backlog and keeps dequeuing rather
// than taking one task and waiting for more news.
func TestWakeDrainsABacklogOnOneToken(t *testing.T) {
	t.Parallel()
	const n = 50
	f := startFleet(t, 3)
	quiet(t, f.rdb)
	for i := range n {
		f.enqueue(t, fmt.Sprint("q", i), false)
	}
	if err := broker.Notify(context.Background(), f.rdb, "default"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	f.collect(t, n, seen)
	quiet(t, f.rdb)
	f.done(t, seen, n)
}

// TestWakeBurst: tasks enqueued back to back, each with news, while the
// fleet takes them: every task is handled once. Runs beyond one a task are
// logged, not bounded (they depend on timing): a worker that finds more
// tasks left keeps dequeuing without tokens and ends with one empty run,
// and the tokens of the tasks it took so wake workers for nothing, one
// empty run each. 100 tasks took 125 to 160 runs here (200 before woken
// rounds counted what they left).
func TestWakeBurst(t *testing.T) {
	t.Parallel()
	const n = 100
	f := startFleet(t, 3)
	before := quiet(t, f.rdb)
	for i := range n {
		f.enqueue(t, fmt.Sprint("b", i), true)
	}
	seen := map[string]bool{}
	f.collect(t, n, seen)
	runs := quiet(t, f.rdb) - before
	f.done(t, seen, n)
	t.Logf("%d tasks, %d dequeue script runs, %d tokens left", n, runs, f.rdb.LLen(context.Background(), keys.WakeList()).Val())
}

// failQueue fails every dequeue of one queue, as a Redis node that is down
// would, and counts the dequeue errors that reach asynq when it is the
// outermost hook (errs).
type failQueue struct {
	queue string
	errs  atomic.Int64
	outer bool
}

func (f *failQueue) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *failQueue) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f *failQueue) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		isDequeue := false
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			k, _ := cmd.Args()[3].(string)
			isDequeue = strings.HasSuffix(k, ":pending")
			if !f.outer && k == broker.PendingKey(f.queue) {
				err := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
				cmd.SetErr(err)
				return err
			}
		}
		err := next(ctx, cmd)
		// NOSCRIPT is go-redis loading the script (it runs EVAL next).
		if f.outer && isDequeue && err != nil && !errors.Is(err, redis.Nil) && !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			f.errs.Add(1)
		}
		return err
	}
}

// TestDequeueSkipsAnUnreachableQueue: a queue whose node does not answer
// does not hold up the others (asynq would end each round on its error):
// the wake hook answers it empty for a while, the round goes on, and no
// dequeue error reaches asynq.
func TestDequeueSkipsAnUnreachableQueue(t *testing.T) {
	t.Parallel()
	seen := &failQueue{queue: "critical", outer: true}
	b := setupWith(t, wakeSetup{maxIdle: time.Minute, strict: true,
		outer: []redis.Hook{seen}, inner: []redis.Hook{&failQueue{queue: "critical"}}})
	for i := 0; i < 5; i++ {
		b.enqueue(t, "low", "low-"+strconv.Itoa(i), true)
		b.expect(t, "low:low-"+strconv.Itoa(i))
	}
	if n := seen.errs.Load(); n != 0 {
		t.Fatalf("%d dequeue errors reached asynq, each ending a round; want 0", n)
	}
}

// hangPops makes every blocking pop hang while armed, as a node that was
// SIGSTOPped or left the network does, until released.
type hangPops struct {
	armed   atomic.Bool
	release chan struct{}
}

func (h *hangPops) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *hangPops) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *hangPops) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "blpop" || !h.armed.Load() {
			return next(ctx, cmd)
		}
		<-h.release
		cmd.SetErr(errors.New("i/o timeout"))
		return cmd.Err()
	}
}

// TestHungWakeListDoesNotHoldTheWorker: when the node of the wake list
// hangs, news from producers no longer arrives (after a failover it goes to
// the new master), so an idle worker must not stay in its pop, nor trust
// its empty marks: a task enqueued without news is handled within seconds,
// not after the pop's read deadline or MaxIdle.
func TestHungWakeListDoesNotHoldTheWorker(t *testing.T) {
	t.Parallel()
	hang := &hangPops{release: make(chan struct{})}
	t.Cleanup(func() { close(hang.release) })
	b := setupWith(t, wakeSetup{maxIdle: time.Minute, inner: []redis.Hook{hang}})
	b.enqueue(t, "default", "before", true)
	b.expect(t, "default:before")
	hang.armed.Store(true)
	b.waitIdle(t)
	b.enqueue(t, "low", "without-news", false)
	select {
	case got := <-b.handled:
		if got != "low:without-news" {
			t.Fatalf("handled %q, want low:without-news", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a task was not handled within 5s while the wake list's node hung")
	}
}
