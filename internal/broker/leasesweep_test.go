package broker

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// TestLeaseSweeperRequeuesOnlyStaleLeases puts three tasks in the active
// state the way asynq does when it dequeues them, with leases last extended
// 35 s, 20 s and 2 s ago, and checks that only the first two go back to the
// head of the pending list, once, even with two sweepers racing.
func TestLeaseSweeperRequeuesOnlyStaleLeases(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	client := asynq.NewClientFromRedisClient(rdb)
	const q = "default"
	ids := []string{"dead", "stale", "fresh", "waiting"}
	for _, id := range ids {
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// asynq pops from the right of pending and pushes onto active.
	lastExtended := map[string]time.Duration{"dead": 35 * time.Second, "stale": 20 * time.Second, "fresh": 2 * time.Second}
	for _, id := range ids[:3] {
		activate(t, rdb, q, id, now.Add(leaseDuration-lastExtended[id]))
	}
	var (
		mu        sync.Mutex
		recovered int
		woken     []string
	)
	newSweeper := func() *leaseSweeper {
		return newLeaseSweeper(rdb, []string{q, "critical"}, 15*time.Second, time.Second,
			func(q string) { mu.Lock(); woken = append(woken, q); mu.Unlock() },
			func(_ string, n int) { mu.Lock(); recovered += n; mu.Unlock() },
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	var wg sync.WaitGroup
	moved := make([]int, 2)
	for i := range moved {
		wg.Add(1)
		go func() { defer wg.Done(); moved[i] = newSweeper().Sweep(ctx) }()
	}
	wg.Wait()
	if moved[0]+moved[1] != 2 || recovered != 2 {
		t.Fatalf("sweepers moved %v tasks (recovered %d), want 2 in total", moved, recovered)
	}
	if len(woken) == 0 || woken[0] != q {
		t.Errorf("woken queues %v, want %q", woken, q)
	}
	active, _ := rdb.LRange(ctx, ActiveKey(q), 0, -1).Result()
	if len(active) != 1 || active[0] != "fresh" {
		t.Errorf("active = %v, want only the task with a fresh lease", active)
	}
	lease, _ := rdb.ZRange(ctx, LeaseKey(q), 0, -1).Result()
	if len(lease) != 1 || lease[0] != "fresh" {
		t.Errorf("lease set = %v, want only fresh", lease)
	}
	pending, _ := rdb.LRange(ctx, PendingKey(q), 0, -1).Result()
	// The recovered tasks sit at the right end, where asynq dequeues next.
	if len(pending) != 3 || pending[0] != "waiting" {
		t.Fatalf("pending = %v, want waiting followed by the two recovered tasks", pending)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	for _, id := range []string{"dead", "stale"} {
		info, err := insp.GetTaskInfo(q, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != asynq.TaskStatePending {
			t.Errorf("task %s state %v, want pending", id, info.State)
		}
	}
	if n := newSweeper().Sweep(ctx); n != 0 {
		t.Errorf("a second sweep moved %d tasks, want 0", n)
	}
}

// activate moves pending task id of queue q to active the way asynq's
// dequeue does, with its lease ending at lease.
func activate(t *testing.T, rdb redis.Cmdable, q, id string, lease time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := rdb.LRem(ctx, PendingKey(q), 0, id).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.LPush(ctx, ActiveKey(q), id).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, LeaseKey(q), redisZ(float64(lease.Unix()), id)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, taskKey(q, id), "state", "active").Err(); err != nil {
		t.Fatal(err)
	}
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
