package broker_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/test/redistest"
)

// failLeases is a go-redis hook that makes asynq's lease extensions (ZADD
// asynq:{q}:lease XX ...) fail while on is set, as they do for a worker
// cut off from Redis during a failover whose election is retried.
type failLeases struct{ on atomic.Bool }

func (f *failLeases) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *failLeases) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f *failLeases) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		a := cmd.Args()
		if f.on.Load() && cmd.Name() == "zadd" && len(a) > 2 {
			if k, _ := a[1].(string); strings.HasSuffix(k, ":lease") {
				err := errors.New("dial tcp: connection refused")
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}

// A handler asks broker.LeaseHeld before each send: while asynq extends
// the task's lease it may send, however long the task runs; once the
// extensions have failed for the lease recovery time less a heartbeat, it
// must not, since the sweeper of any worker may have handed the task on.
func TestLeaseHeldFollowsTheExtensions(t *testing.T) {
	t.Parallel()
	for _, failing := range []bool{false, true} {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		fail := &failLeases{}
		rdb.AddHook(fail) // after NewServer's hooks: the watch sees the failure
		s, err := broker.NewServer(rdb, broker.ServerConfig{Queues: map[string]int{"default": 1}, Concurrency: 1,
			LeaseRecoveryAfter: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		verdict := make(chan [2]error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.Run(ctx, map[string]broker.Handler{"x": broker.HandlerFunc(func(hctx context.Context, _ broker.Task) error {
				first := broker.LeaseHeld(hctx)
				fail.on.Store(failing)
				time.Sleep(7 * time.Second) // past the 10s - 5s the last extension may be old
				verdict <- [2]error{first, broker.LeaseHeld(hctx)}
				return nil
			})}, nil)
		}()
		c := asynq.NewClientFromRedisClient(srv.Client(t))
		if _, err := c.Enqueue(asynq.NewTask("x", nil)); err != nil {
			t.Fatal(err)
		}
		var v [2]error
		select {
		case v = <-verdict:
		case <-time.After(60 * time.Second):
			t.Fatal("the task never ran")
		}
		cancel()
		<-done
		if v[0] != nil {
			t.Errorf("failing=%v: at the start LeaseHeld = %v, want nil", failing, v[0])
		}
		if failing && !errors.Is(v[1], broker.ErrLeaseLost) {
			t.Errorf("after 7s of failed extensions LeaseHeld = %v, want ErrLeaseLost", v[1])
		}
		if !failing && v[1] != nil {
			t.Errorf("after 7s of extensions LeaseHeld = %v, want nil (asynq extends every 5s)", v[1])
		}
	}
}
