package broker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
)

// dequeueCounter counts asynq dequeue scripts that actually reach Redis.
type dequeueCounter struct{ n atomic.Int64 }

func (c *dequeueCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *dequeueCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (c *dequeueCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			if k, _ := cmd.Args()[3].(string); len(k) > 8 && k[len(k)-8:] == ":pending" {
				c.n.Add(1)
			}
		}
		return next(ctx, cmd)
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
	mr := miniredis.RunT(t)
	queues := []string{"critical", "default", "low"}
	w := broker.NewWaker(queues, time.Minute, t.Name())
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	counter := &dequeueCounter{}
	rdb.AddHook(w.Hook())
	rdb.AddHook(counter)
	w.SetClient(rdb)
	t.Cleanup(func() { _ = rdb.Close() })
	handled := make(chan string, 16)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 2, Queues: map[string]int{"critical": 6, "default": 3, "low": 1},
		TaskCheckInterval: 100 * time.Microsecond, DelayedTaskCheckInterval: time.Minute,
		LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		q, _ := asynq.GetQueueName(ctx)
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
