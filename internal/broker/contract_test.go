package broker

// The contract with asynq: every assumption this package makes about asynq's
// Redis layout and scripts, checked against the real asynq client and server
// (the version in go.mod) on a real redis-server. The recognisers are fed the
// script calls asynq really sends, captured by a go-redis hook while the
// real server dequeues, forwards and aggregates; Herald's own scripts run on
// the state the real asynq left. When an asynq upgrade changes any of it,
// these tests fail here, by name, instead of Herald degrading silently.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// scriptCall is one script command asynq sent, with its reply.
type scriptCall struct {
	cmd   *redis.Cmd // a copy, safe to classify and to send again
	typed bool       // asynq's command was a *redis.Cmd, as the wake hook expects
	reply any
	err   error
}

// recorder is a go-redis hook that keeps every script call it sees.
type recorder struct {
	mu    sync.Mutex
	calls []scriptCall
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			c := scriptCall{cmd: redis.NewCmd(ctx, append([]any(nil), cmd.Args()...)...), err: err}
			if rc, ok := cmd.(*redis.Cmd); ok {
				c.typed, c.reply = true, rc.Val()
			}
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
		}
		return err
	}
}

func (r *recorder) snapshot() []scriptCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scriptCall(nil), r.calls...)
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// redisNow is Redis's clock, the one asynq's scores and Herald's scripts use.
func redisNow(t *testing.T, rdb redis.Cmdable) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// scheduledKey is the sorted set of queue's tasks scheduled for later,
// scored by the Unix second they are due; only the contract test reads it.
func scheduledKey(queue string) string { return key(queue, "scheduled") }

// score returns member's score in key, failing when it is absent.
func score(t *testing.T, rdb redis.Cmdable, key, member string) float64 {
	t.Helper()
	s, err := rdb.ZScore(context.Background(), key, member).Result()
	if err != nil {
		t.Fatalf("ZSCORE %s %s: %v (asynq no longer keeps it there)", key, member, err)
	}
	return s
}

// wantUnixSeconds checks that a score is a whole Unix second within
// [lo-1s, hi+1s].
func wantUnixSeconds(t *testing.T, what string, s float64, lo, hi time.Time) {
	t.Helper()
	if s != math.Trunc(s) || s < float64(lo.Unix()-1) || s > float64(hi.Unix()+1) {
		t.Errorf("%s scored %s, want whole Unix seconds in [%d, %d]", what, strconv.FormatFloat(s, 'f', -1, 64), lo.Unix(), hi.Unix())
	}
}

// waitFor polls cond until it holds or 20 s pass: the states it waits for
// are written by asynq's goroutines, which signal nothing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holding is a handler that sends each task's id to started, then holds
// the task until release yields.
func holding(started chan<- string, release <-chan struct{}) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		started <- id
		<-release
		return nil
	})
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// TestContractDequeue: the wake hook recognises asynq's dequeue script, the
// script answers redis.Nil for an empty queue (as the hook answers for it),
// retargeting its keys dequeues from another queue, and a dequeued task is
// active with a lease LeaseDuration ahead, in Unix seconds.
func TestContractDequeue(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	rec := &recorder{}
	rdb.AddHook(rec)
	ctx := context.Background()
	type seen struct {
		id, state     string
		active        bool
		lease, now    float64
		leaseErr, err error
	}
	handled := make(chan seen, 4)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		// Strict priority: every round asks the empty critical queue before
		// low, so an empty-queue dequeue is always among the calls seen
		// (with weights, asynq may pick low first and never ask critical).
		Concurrency: 1, Queues: map[string]int{"critical": 2, "low": 1}, StrictPriority: true,
		TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		s := seen{id: id}
		now, err := rdb.Time(ctx).Result()
		s.now, s.err = float64(now.Unix()), err
		s.lease, s.leaseErr = rdb.ZScore(ctx, LeaseKey("low"), id).Result()
		s.state = rdb.HGet(ctx, taskKey("low", id), "state").Val()
		s.active = rdb.LPos(ctx, ActiveKey("low"), id, redis.LPosArgs{}).Err() == nil
		handled <- s
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	const payload = "contract-dequeue-payload"
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", []byte(payload)), asynq.Queue("low"), asynq.TaskID("dq")); err != nil {
		t.Fatal(err)
	}
	s := receive(t, handled, "the task to be handled")
	srv.Shutdown()

	if s.err != nil || s.leaseErr != nil {
		t.Fatalf("while handled, the task has no lease in %s: %v %v", LeaseKey("low"), s.err, s.leaseErr)
	}
	if want := s.now + leaseDuration.Seconds(); s.lease < want-2 || s.lease > want+1 || s.lease != math.Trunc(s.lease) {
		t.Errorf("lease scored %.0f while handled at %.0f, want whole Unix seconds ≈ now + LeaseDuration (%.0f)", s.lease, s.now, want)
	}
	if !s.active || s.state != "active" {
		t.Errorf("while handled: in %s = %v, state = %q; want true, \"active\"", ActiveKey("low"), s.active, s.state)
	}

	calls := rec.snapshot()
	var popped, emptyCritical *scriptCall
	for i, c := range calls {
		kind, q := classify(c.cmd)
		if str, _ := c.reply.(string); strings.Contains(str, payload) {
			popped = &calls[i]
			if kind != dequeue || q != "low" {
				t.Errorf("asynq dequeued the task with %v, recognised as kind %d of queue %q: want dequeue of low; "+
					"the wake hook would never hold an idle round", c.cmd.Args(), kind, q)
			}
		}
		if kind != dequeue {
			continue
		}
		if c.err != nil && c.err != redis.Nil && !redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			t.Errorf("recognised dequeue %v failed: %v", c.cmd.Args(), c.err)
		}
		if q == "critical" && c.err == redis.Nil && emptyCritical == nil {
			emptyCritical = &calls[i]
		}
	}
	if popped == nil {
		t.Fatalf("no script call of asynq's returned the task (%d script calls seen)", len(calls))
	}
	if emptyCritical == nil {
		t.Fatal("no recognised dequeue of the empty queue critical answered redis.Nil, which the wake hook answers for Redis")
	}

	// The call that found critical empty, retargeted to low, takes low's
	// next task: the keys and the task key prefix are all the queue's.
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", []byte("retargeted")), asynq.Queue("low"), asynq.TaskID("rt")); err != nil {
		t.Fatal(err)
	}
	cmd := redis.NewCmd(ctx, append([]any(nil), emptyCritical.cmd.Args()...)...)
	retarget(cmd, "critical", "low")
	if err := rdb.Process(ctx, cmd); err != nil {
		t.Fatalf("retargeted dequeue %v: %v", cmd.Args(), err)
	}
	if str, _ := cmd.Val().(string); !strings.Contains(str, "retargeted") {
		t.Fatalf("retargeted dequeue answered %q, want low's task", cmd.Val())
	}
	if ids := rdb.LRange(ctx, ActiveKey("low"), 0, -1).Val(); len(ids) != 1 || ids[0] != "rt" {
		t.Errorf("after the retargeted dequeue %s = %v, want [rt]", ActiveKey("low"), ids)
	}
	if n := rdb.LLen(ctx, PendingKey("low")).Val(); n != 0 {
		t.Errorf("%s still holds %d tasks", PendingKey("low"), n)
	}
}

// TestContractForward: the wake hook recognises asynq's forward script, and
// its reply counts the tasks moved; scheduled tasks are scored in Unix
// seconds.
func TestContractForward(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	rec := &recorder{}
	rdb.AddHook(rec)
	before := redisNow(t, rdb)
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", nil), asynq.Queue("default"),
		asynq.TaskID("later"), asynq.ProcessIn(time.Second)); err != nil {
		t.Fatal(err)
	}
	wantUnixSeconds(t, "a scheduled task", score(t, rdb, scheduledKey("default"), "later"),
		before.Add(time.Second), redisNow(t, rdb).Add(time.Second))
	handled := make(chan string, 1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{"default": 1},
		TaskCheckInterval: 10 * time.Millisecond, DelayedTaskCheckInterval: 100 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		handled <- id
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	receive(t, handled, "the scheduled task to be handled")
	srv.Shutdown()
	moved := false
	for _, c := range rec.snapshot() {
		kind, q := classify(c.cmd)
		if kind != forward {
			continue
		}
		if q != "default" || !c.typed {
			t.Errorf("recognised forward %v: queue %q, *redis.Cmd %v", c.cmd.Args(), q, c.typed)
		}
		if n, ok := c.reply.(int64); ok && n > 0 {
			moved = true
		}
	}
	if !moved {
		t.Fatal("no recognised forward of asynq's answered a positive count: the wake hook would not wake on forwarded tasks")
	}
}

// TestContractPromote: a failed task waits in the retry set scored by the
// whole Unix second it is due (so backstopDelay keeps asynq from moving it
// early), its hash keeps its state and pending_since under the names and in
// the units the promote script writes, and the end of pending the script
// pushes on is the one asynq pops next.
func TestContractPromote(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const q = "low"
	const delay = time.Hour + 300*time.Millisecond
	failedAt := make(chan time.Time, 1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{q: 1}, TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return backstopDelay(delay) },
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		failedAt <- redisNow(t, rdb)
		return fmt.Errorf("fail once")
	})); err != nil {
		t.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb)
	if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID("snoozed")); err != nil {
		t.Fatal(err)
	}
	at := receive(t, failedAt, "the task to fail")
	waitFor(t, "the task in the retry set", func() bool { return rdb.ZScore(ctx, retryKey(q), "snoozed").Err() == nil })
	srv.Shutdown()
	s := score(t, rdb, retryKey(q), "snoozed")
	wantUnixSeconds(t, "a retry", s, at.Add(delay), redisNow(t, rdb).Add(backstopDelay(delay)))
	if float64(at.Add(delay).UnixNano())/1e9 > s+1 {
		t.Errorf("retry scored %v, due %v: asynq's forwarder could move it early", s, at.Add(delay))
	}
	if st := rdb.HGet(ctx, taskKey(q, "snoozed"), "state").Val(); st != "retry" {
		t.Errorf("a retry's state field is %q, want \"retry\"", st)
	}

	for _, id := range []string{"first", "second"} {
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
	}
	woken := make(chan string, 1)
	p := newPromoter(rdb, func(q string) { woken <- q }, quietLog())
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go p.Run(pctx)
	p.PromoteAt(q, "snoozed", time.Now())
	if got := receive(t, woken, "the promotion"); got != q {
		t.Fatalf("promoter woke %q, want %q", got, q)
	}
	info, err := asynq.NewInspectorFromRedisClient(rdb).GetTaskInfo(q, "snoozed")
	if err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("after promotion asynq sees %v (%v), want pending", info, err)
	}
	ours := rdb.HMGet(ctx, taskKey(q, "snoozed"), "state", "pending_since").Val()
	theirs := rdb.HMGet(ctx, taskKey(q, "first"), "state", "pending_since").Val()
	oursNs, _ := strconv.ParseInt(fmt.Sprint(ours[1]), 10, 64)
	theirsNs, _ := strconv.ParseInt(fmt.Sprint(theirs[1]), 10, 64)
	if ours[0] != theirs[0] || theirsNs == 0 || math.Abs(float64(oursNs-theirsNs)) > float64(time.Minute) {
		t.Errorf("promoted task's state, pending_since = %v, asynq's own pending task's = %v: want the same fields and units", ours, theirs)
	}

	order := make(chan string, 3)
	srv = asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{q: 1}, TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		order <- id
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	var got []string
	for range 3 {
		got = append(got, receive(t, order, "the pending tasks"))
	}
	if strings.Join(got, ",") != "snoozed,first,second" {
		t.Fatalf("asynq handled %v, want the promoted task first: the promote script pushes on the wrong end of pending", got)
	}
}

// TestContractLeaseSweep: asynq extends a running task's lease to
// leaseDuration ahead every few seconds, and the sweep script's requeue is a
// pending task asynq takes next.
func TestContractLeaseSweep(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const q = "default"
	started, release := make(chan string, 2), make(chan struct{}, 2)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{q: 1}, TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(holding(started, release)); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID("held")); err != nil {
		t.Fatal(err)
	}
	receive(t, started, "the task to start")
	first := score(t, rdb, LeaseKey(q), "held")
	// The owning server's heartbeat extends the lease (every 5 s in v0.26).
	waitFor(t, "asynq to extend the lease", func() bool { return rdb.ZScore(ctx, LeaseKey(q), "held").Val() > first })
	now := redisNow(t, rdb)
	wantUnixSeconds(t, "an extended lease", score(t, rdb, LeaseKey(q), "held"), now.Add(leaseDuration-time.Second), now.Add(leaseDuration))

	// A sweeper for which any lease is stale requeues the running task.
	sw := newLeaseSweeper(rdb, []string{q}, -2*time.Second, time.Second, nil, nil, quietLog())
	if n := sw.Sweep(ctx); n != 1 {
		t.Fatalf("sweep moved %d tasks, want the running one", n)
	}
	if st := rdb.HGet(ctx, taskKey(q, "held"), "state").Val(); st != "pending" {
		t.Errorf("swept task's state %q, want pending", st)
	}
	release <- struct{}{}
	if id := receive(t, started, "asynq to take the swept task again"); id != "held" {
		t.Fatalf("asynq took %q, want the swept task", id)
	}
	release <- struct{}{}
}

// TestContractDigestWake: asynq's aggregator groups tasks in the layout the
// reclaimer works on, and the hook recognises the call that deletes the
// aggregation set once the digest task is stored.
func TestContractDigestWake(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	woken := make(chan string, 4)
	rdb.AddHook(newDigestWakeHook(func(_ context.Context, q string) { woken <- q }))
	before := redisNow(t, rdb)
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("item", nil), asynq.Queue("low"),
		asynq.Group("-100:7"), asynq.TaskID("item")); err != nil {
		t.Fatal(err)
	}
	wantUnixSeconds(t, "a grouped task", score(t, rdb, GroupKey("low", "-100:7"), "item"), before, redisNow(t, rdb))
	if !rdb.SIsMember(ctx, GroupsKey("low"), "-100:7").Val() {
		t.Fatalf("%s does not list the group", GroupsKey("low"))
	}
	handled := make(chan string, 1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{"low": 1}, GroupGracePeriod: time.Second, LogLevel: asynq.FatalLevel,
		GroupAggregator: asynq.GroupAggregatorFunc(func(group string, _ []*asynq.Task) *asynq.Task {
			return asynq.NewTask("digest", []byte(group))
		}),
	})
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		handled <- task.Type()
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if q := receive(t, woken, "the hook to see the aggregation set deleted"); q != "low" {
		t.Fatalf("hook woke queue %q, want low", q)
	}
	if typ := receive(t, handled, "the digest task"); typ != "digest" {
		t.Fatalf("handled %q, want the digest", typ)
	}
	if n := rdb.ZCard(ctx, AggregationSetsKey("low")).Val(); n != 0 {
		t.Errorf("%d aggregation sets remain after the recognised deletion", n)
	}
}
