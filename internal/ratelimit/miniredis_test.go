package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// The all-local mode (cmd/herald) runs the limiter on miniredis, whose Lua
// engine is not Redis' own: the scripts must work there too.
func TestScriptsRunOnMiniredis(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	lim, err := ratelimit.New(rdb, ratelimit.Config{
		Bot:            ratelimit.Per(2, time.Second),
		Private:        ratelimit.Per(1, 10*time.Second),
		PriorityQueues: []string{"critical"},
		Priority:       ratelimit.Per(1, time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := lim.Acquire(ctx, ratelimit.Ask{Chat: "1", Queue: "default", TaskID: "a", Progress: true})
	if err != nil || first.Kind != ratelimit.Go || first.Slot == "" {
		t.Fatalf("first: %+v, %v; want go with a slot", first, err)
	}
	for _, c := range []string{"2", "3", "4"} {
		if _, err := lim.Acquire(ctx, ratelimit.Ask{Chat: c, Queue: "default", TaskID: "m" + c}); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := lim.Acquire(ctx, ratelimit.Ask{Chat: "1", Queue: "default", TaskID: "b"}); err != nil || d.Kind != ratelimit.Defer {
		t.Fatalf("second message to chat 1: %+v, %v; want defer", d, err)
	}
	if d, err := lim.Acquire(ctx, ratelimit.Ask{Chat: "5", Queue: "critical", TaskID: "crit"}); err != nil || d.Kind == ratelimit.Go {
		t.Fatalf("critical: %+v, %v; want the earliest booked slot, not now", d, err)
	}
	p, err := lim.Penalize(ctx, "1", first.Slot, 3*time.Second)
	if err != nil || p.Scope() != "bot" || p.Requeued != 2 {
		t.Fatalf("penalize: %+v, %v; want a bot pause requeueing 2", p, err)
	}
}
