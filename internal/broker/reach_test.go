package broker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// TestSweepWaitsOutAnOutage stops Redis (SIGSTOP) for longer than the lease
// recovery time would allow, as a failover whose promotion comes late does:
// when it answers again, every lease is stale, the live workers' too. The
// sweep must leave them for reachGrace, long enough for those workers'
// heartbeats to extend them, and only then hand on what is still stale.
func TestSweepWaitsOutAnOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	const q = "default"
	client := asynq.NewClientFromRedisClient(rdb)
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"held", "dead"} {
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
		activate(t, rdb, q, id, now.Add(leaseDuration-20*time.Second))
	}
	r := newReach()
	clock := time.Now()
	r.now = func() time.Time { return clock }
	rdb.AddHook(r.hook())
	s := newLeaseSweeper(rdb, []string{q}, 15*time.Second, time.Second, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.reach = r

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	if n := s.Sweep(ctx); n != 0 {
		t.Errorf("a sweep moved %d tasks while Redis did not answer", n)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if r.steady(reachGrace) {
		t.Fatal("the sweep's failed commands were not seen as an outage")
	}
	clock = clock.Add(reachGrace - time.Second)
	if n := s.Sweep(ctx); n != 0 {
		t.Errorf("a sweep %v after the outage moved %d tasks, want 0 until %v", reachGrace-time.Second, n, reachGrace)
	}
	// A live worker's heartbeat extends its lease meanwhile.
	if err := rdb.ZAddXX(ctx, LeaseKey(q), redisZ(float64(time.Now().Add(leaseDuration).Unix()), "held")).Err(); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	if n := s.Sweep(ctx); n != 1 {
		t.Errorf("a sweep %v after the outage moved %d tasks, want 1: the dead worker's", reachGrace, n)
	}
	active, _ := rdb.LRange(ctx, ActiveKey(q), 0, -1).Result()
	if len(active) != 1 || active[0] != "held" {
		t.Errorf("active = %v, want only the task whose lease was extended", active)
	}
}

// TestNoMasterTellsAnOutageFromAnAnswer classifies real errors: a refused
// dial and a replica's READONLY mean there is no master to talk to; a
// missing key, a script's error and a context that ended do not.
func TestNoMasterTellsAnOutageFromAnAnswer(t *testing.T) {
	t.Parallel()
	master, replica := redistest.StartReplicated(t)
	ctx := context.Background()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = closed.Close() })
	m, rep := master.Client(t), replica.Client(t)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused dial", closed.Ping(ctx).Err(), true},
		{"write to a replica", rep.Set(ctx, "k", "v", 0).Err(), true},
		{"missing key", m.Get(ctx, "missing").Err(), false},
		{"script error", m.Eval(ctx, "return redis.error_reply('ERR nope')", nil).Err(), false},
		{"cancelled context", m.Ping(cancelled).Err(), false},
		{"no error", m.Ping(ctx).Err(), false},
	} {
		if c.err == nil && c.want {
			t.Fatalf("%s: no error to classify", c.name)
		}
		if got := noMaster(c.err); got != c.want {
			t.Errorf("%s (%v): noMaster = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if !errors.Is(m.Get(ctx, "missing").Err(), redis.Nil) {
		t.Fatal("a missing key did not answer redis.Nil")
	}
}
