package alerts

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// recorder is an enqueuer that keeps the requests; failAt > 0 makes the
// failAt-th call (1-based) fail with jobs.ErrUnavailable.
type recorder struct {
	mu     sync.Mutex
	reqs   []jobs.Request
	calls  int
	failAt int
}

func (r *recorder) Enqueue(_ context.Context, req jobs.Request) (jobs.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == r.failAt {
		return jobs.Result{}, jobs.ErrUnavailable
	}
	r.reqs = append(r.reqs, req)
	return jobs.Result{TaskID: fmt.Sprintf("%s#%d", req.Message.Chat, len(r.reqs)), Queue: req.Queue}, nil
}

func (r *recorder) requests() []jobs.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]jobs.Request(nil), r.reqs...)
}

// quietLogger discards logs.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testNow is the clock of the routers under test.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newTestRouter builds a Router on a parsed table and any enqueuer.
func newTestRouter(t testing.TB, src string, enq enqueuer) *Router {
	t.Helper()
	r := &Router{enq: enq, cfg: RouterConfig{Logger: quietLogger(), Now: func() time.Time { return testNow }}.WithDefaults()}
	r.table.Store(mustParse(t, src))
	return r
}

// redisBundle is a miniredis with an Enqueuer and an Inspector on it.
type redisBundle struct {
	mr        *miniredis.Miniredis
	rdb       *redis.Client
	enq       *jobs.Enqueuer
	inspector *asynq.Inspector
}

func newRedisBundle(t testing.TB) *redisBundle {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = insp.Close() })
	return &redisBundle{mr: mr, rdb: rdb, enq: jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), inspector: insp}
}

// taskKeys lists the asynq task hashes in Redis.
func (b *redisBundle) taskKeys() []string {
	var out []string
	for _, k := range b.mr.Keys() {
		if strings.HasPrefix(k, "asynq:{") && strings.Contains(k, "}:t:") {
			out = append(out, k)
		}
	}
	return out
}

// task returns a stored task's payload.
func (b *redisBundle) task(t testing.TB, queue, id string) jobs.SendMessage {
	t.Helper()
	info, err := b.inspector.GetTaskInfo(queue, id)
	if err != nil {
		t.Fatalf("task %s/%s: %v", queue, id, err)
	}
	m, err := jobs.Decode(info.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
