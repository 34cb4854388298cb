package broker

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// TestReclaimerReturnsARealAbandonedAggregation lets asynq v0.26 itself
// leave an aggregation set behind (its aggregated task cannot be stored, as
// when the aggregator dies before storing it), which pins the key layout and
// scores the reclaimer relies on, then checks that the reclaimer puts the
// items back into their group, lists the group again, and leaves fresh sets
// alone.
func TestReclaimerReturnsARealAbandonedAggregation(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const q, group = "default", "-100123:7" // a forum topic: the group name holds a colon
	client := asynq.NewClientFromRedisClient(rdb)
	for _, id := range []string{"a", "b", "c"} {
		if _, err := client.Enqueue(asynq.NewTask("item", []byte(id)), asynq.Queue(q), asynq.Group(group), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
	}
	// The aggregated task reuses the id of a scheduled task, so asynq
	// cannot store it and keeps the aggregation set.
	if _, err := client.Enqueue(asynq.NewTask("x", nil), asynq.Queue(q), asynq.TaskID("taken"), asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	aggregated := make(chan struct{})
	var once sync.Once
	server := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues:           map[string]int{q: 1},
		GroupGracePeriod: time.Second,
		GroupAggregator: asynq.GroupAggregatorFunc(func(string, []*asynq.Task) *asynq.Task {
			once.Do(func() { close(aggregated) })
			return asynq.NewTask("digest", nil, asynq.TaskID("taken"))
		}),
		LogLevel: asynq.FatalLevel,
	})
	if err := server.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aggregated:
	case <-ctx.Done():
		t.Fatal("asynq never aggregated the group")
	}
	server.Shutdown()

	sets, err := rdb.ZRangeWithScores(ctx, AggregationSetsKey(q), 0, -1).Result()
	if err != nil || len(sets) != 1 {
		t.Fatalf("%d aggregation sets (%v), want the abandoned one", len(sets), err)
	}
	setKey := sets[0].Member.(string)
	if !strings.HasPrefix(setKey, GroupKey(q, group)+":") {
		t.Fatalf("aggregation set %q is not named after group %q", setKey, GroupKey(q, group))
	}
	now, _ := rdb.Time(ctx).Result()
	deadline := now.Add(AggregationTimeout).Unix()
	if s := int64(sets[0].Score); s < deadline-5 || s > deadline+1 {
		t.Fatalf("aggregation set scored %d, want creation + %v ≈ %d", s, AggregationTimeout, deadline)
	}
	if n := rdb.SIsMember(ctx, GroupsKey(q), group).Val(); n {
		t.Fatal("asynq kept listing the emptied group")
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var reclaimed int
	patient := newReclaimer(rdb, []string{q}, time.Minute, nil, log)
	if n := patient.Reclaim(ctx); n != 0 {
		t.Fatalf("a reclaimer waiting a minute took a %v-old set", time.Since(now))
	}
	quick := newReclaimer(rdb, []string{q, "critical"}, time.Second, func(n int) { reclaimed += n }, log)
	for quick.Reclaim(ctx) == 0 {
		// The set must first be a second old (scores are whole seconds).
		select {
		case <-ctx.Done():
			t.Fatal("the set was never reclaimed")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if reclaimed != 3 {
		t.Fatalf("reclaimed %d items, want 3", reclaimed)
	}
	members := rdb.ZRange(ctx, GroupKey(q, group), 0, -1).Val()
	if strings.Join(members, ",") != "a,b,c" {
		t.Fatalf("group holds %v, want a,b,c", members)
	}
	if !rdb.SIsMember(ctx, GroupsKey(q), group).Val() {
		t.Fatal("the group is not listed again: asynq's aggregator would not look at it")
	}
	if n := rdb.Exists(ctx, setKey, AggregationSetsKey(q)).Val(); n != 0 {
		t.Fatalf("%d of the set and the set index remain", n)
	}
	if n := quick.Reclaim(ctx); n != 0 {
		t.Fatalf("a second pass moved %d items", n)
	}
	// The items are whole tasks again: asynq can aggregate them.
	infos, err := asynq.NewInspectorFromRedisClient(rdb).ListAggregatingTasks(q, group)
	if err != nil || len(infos) != 3 {
		t.Fatalf("inspector sees %d grouped tasks (%v), want 3", len(infos), err)
	}
}

// TestReclaimScriptRunsOnMiniredis: the local mode (cmd/herald) runs on
// miniredis, whose Lua must run the reclaimer's script too.
func TestReclaimScriptRunsOnMiniredis(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	const q, group = "default", "42"
	set := AggregationSetKey(q, group, "set-1")
	rdb.ZAdd(ctx, set, redis.Z{Score: 100, Member: "a"}, redis.Z{Score: 101, Member: "b"})
	// Scored as if created an hour ago.
	rdb.ZAdd(ctx, AggregationSetsKey(q), redis.Z{Score: float64(time.Now().Add(-time.Hour).Unix()), Member: set})
	var n int
	r := newReclaimer(rdb, []string{q}, 30*time.Second, func(k int) { n += k }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if got := r.Reclaim(ctx); got != 2 || n != 2 {
		t.Fatalf("reclaimed %d (counted %d), want 2", got, n)
	}
	if m := rdb.ZRange(ctx, GroupKey(q, group), 0, -1).Val(); strings.Join(m, ",") != "a,b" || !rdb.SIsMember(ctx, GroupsKey(q), group).Val() {
		t.Fatalf("group holds %v", m)
	}
}
