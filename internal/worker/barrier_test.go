package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// commandCounter is a go-redis hook that counts the commands a client
// sends, by name, pipelined or not; a SET of a durable marker key counts
// as "marker" (the replication barrier's write).
type commandCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

func (c *commandCounter) count(cmd redis.Cmder) {
	name := strings.ToLower(cmd.Name())
	if args := cmd.Args(); name == "set" && len(args) > 1 && strings.Contains(fmt.Sprint(args[1]), "durable:marker") {
		name = "marker"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
}

// get returns how many commands named name were sent.
func (c *commandCounter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// countingSender counts the requests the worker hands to Telegram.
type countingSender struct {
	worker.Sender
	calls atomic.Int64
}

func (s *countingSender) Send(ctx context.Context, g ratelimit.Grant, m telegram.Message) (telegram.Sent, error) {
	s.calls.Add(1)
	return s.Sender.Send(ctx, g, m)
}

// barrierBundle is a worker on the Redis at addr with durable settings
// cfg, whose client counts its commands.
type barrierBundle struct {
	fake   *telegramfake.Server
	sender *countingSender
	cmds   *commandCounter
	enq    *jobs.Enqueuer
	insp   *asynq.Inspector
	ctx    context.Context
}

func startBarrierBundle(t *testing.T, addr string, cfg durable.Config) *barrierBundle {
	t.Helper()
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	tg, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fake.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b := &barrierBundle{fake: fake, sender: &countingSender{Sender: tg}, cmds: &commandCounter{n: map[string]int{}}}
	rdb := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 3 * time.Second})
	rdb.AddHook(b.cmds)
	w, err := worker.New(worker.Config{
		Client: rdb, Durable: cfg, Sender: b.sender, Limits: scaledLimits(),
		BackoffBase: 100 * time.Millisecond, BackoffCap: time.Second, ShutdownTimeout: 5 * time.Second,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	runWorker(t, w)
	other := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = other.Close() })
	b.enq = jobs.NewEnqueuer(other, jobs.EnqueueConfig{MaxRetry: 5})
	t.Cleanup(func() { _ = b.enq.Close() })
	b.insp = asynq.NewInspector(asynq.RedisClientOpt{Addr: addr})
	t.Cleanup(func() { _ = b.insp.Close() })
	tctx, tcancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(tcancel)
	b.ctx = tctx
	return b
}

// sendAll enqueues n messages to n chats and waits until Telegram has them.
func (b *barrierBundle) sendAll(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if _, err := b.enq.Enqueue(b.ctx, jobs.Request{Message: jobs.SendMessage{Chat: fmt.Sprint(700 + i), Text: fmt.Sprint("barrier ", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for len(b.fake.Messages()) < n {
		if b.ctx.Err() != nil {
			t.Fatalf("%d of %d messages delivered", len(b.fake.Messages()), n)
		}
		time.Sleep(10 * time.Millisecond) // the fake has no delivery notice
	}
}

// TestBarrierCostsNothingWithoutReplicas: with HERALD_REDIS_WAIT_REPLICAS
// auto (the default) on a single redis-server, sending issues no WAIT and
// no marker write at all, and INFO replication (auto's count of replicas,
// shared with the wait after each record) at most once a second; on a
// master with an online replica, every send is preceded by a barrier.
func TestBarrierCostsNothingWithoutReplicas(t *testing.T) {
	t.Parallel()
	const n = 30
	t.Run("single server", func(t *testing.T) {
		t.Parallel()
		b := startBarrierBundle(t, redistest.Start(t).Addr, durable.Config{Auto: true})
		start := time.Now()
		b.sendAll(t, n)
		took := time.Since(start)
		waits, markers, infos := b.cmds.get("wait"), b.cmds.get("marker"), b.cmds.get("info")
		t.Logf("%d sends in %v without replicas: %d WAIT, %d marker writes, %d INFO", n, took.Round(time.Millisecond), waits, markers, infos)
		if waits != 0 || markers != 0 {
			t.Errorf("%d WAIT and %d marker writes for %d sends without replicas, want none", waits, markers, n)
		}
		if limit := int(took/durable.ReplicasTTL) + 2; infos > limit {
			t.Errorf("%d INFO in %v, want at most %d (one per %v)", infos, took, limit, durable.ReplicasTTL)
		}
	})
	t.Run("with a replica", func(t *testing.T) {
		t.Parallel()
		master, _ := redistest.StartReplicated(t)
		b := startBarrierBundle(t, master.Addr, durable.Config{Auto: true})
		start := time.Now()
		b.sendAll(t, n)
		took := time.Since(start)
		// One barrier before the limiter (or with its Confirm) per part,
		// one wait after each record.
		waits, markers := b.cmds.get("wait"), b.cmds.get("marker")
		t.Logf("%d sends in %v with a replica: %d WAIT, %d marker writes", n, took.Round(time.Millisecond), waits, markers)
		if waits < 2*n || markers != waits {
			t.Errorf("%d WAIT and %d marker writes for %d sends with a replica, want a marker and a WAIT before and after each", waits, markers, n)
		}
	})
}

// TestBarrierHoldsTheSendWhileTheReplicaLags: with a replica that does not
// confirm (paused), a message is not handed to Telegram at all, its task
// is snoozed without spending its retry budget, and it is sent once when
// the replica is back.
func TestBarrierHoldsTheSendWhileTheReplicaLags(t *testing.T) {
	t.Parallel()
	master, replica := redistest.StartReplicated(t)
	b := startBarrierBundle(t, master.Addr, durable.Config{Replicas: 1, Timeout: 200 * time.Millisecond})
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = replica.Resume()
		}
	})
	res, err := b.enq.Enqueue(b.ctx, jobs.Request{Message: jobs.SendMessage{Chat: "71", Text: "held back"}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the span under test: several barriers fail meanwhile
	if n := b.sender.calls.Load(); n != 0 {
		t.Fatalf("%d requests to Telegram while the replica did not confirm, want none", n)
	}
	info, err := b.insp.GetTaskInfo("default", res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if info.Retried != 0 || info.State == asynq.TaskStateArchived {
		t.Errorf("task while the replica lags: state %v, retried %d; want it handed back without spending its budget", info.State, info.Retried)
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	for len(b.fake.Messages()) == 0 {
		if b.ctx.Err() != nil {
			t.Fatal("the message was not sent after the replica came back")
		}
		time.Sleep(10 * time.Millisecond) // the fake has no delivery notice
	}
	time.Sleep(300 * time.Millisecond) // a second send would come meanwhile
	if n := len(b.fake.Messages()); n != 1 {
		t.Errorf("%d messages delivered, want 1", n)
	}
}
