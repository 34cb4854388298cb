package broker

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestPromoterStoppingLeavesTasksForHandOver: promotions that a stopping
// promoter did not finish stay with it, and HandOver returns those tasks
// to their queue; Run returns at once when its context ends, even with
// promotions due.
func TestPromoterStoppingLeavesTasksForHandOver(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	const q = "default"
	for _, id := range []string{"a", "b"} {
		if err := rdb.ZAdd(ctx, retryKey(q), redis.Z{Score: 0, Member: id}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.HSet(ctx, taskKey(q, id), "state", "retry").Err(); err != nil {
			t.Fatal(err)
		}
	}
	p := newPromoter(rdb, func(string) {}, quietLog())
	p.PromoteAt(q, "a", time.Now().Add(-time.Second))
	p.PromoteAt(q, "b", time.Now().Add(-time.Second))

	stopped, stop := context.WithCancel(ctx)
	stop()
	p.promoteDue(stopped)
	if n := len(p.items); n != 2 {
		t.Fatalf("after a promotion cut short by shutdown the promoter holds %d tasks, want 2", n)
	}
	done := make(chan struct{})
	go func() { p.Run(stopped); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended, with promotions due")
	}

	if n := p.HandOver(ctx, func(context.Context, string) {}); n != 2 {
		t.Fatalf("HandOver moved %d tasks, want 2", n)
	}
	if got := rdb.LRange(ctx, PendingKey(q), 0, -1).Val(); len(got) != 2 {
		t.Fatalf("pending %v, want both tasks", got)
	}
}
