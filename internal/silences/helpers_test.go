package silences

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t time.Time) *clock { return &clock{now: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// t0 is the tests' starting time.
var t0 = time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// items is an itemEnqueuer that keeps the items; fail, when set, fails
// every call.
type items struct {
	mu   sync.Mutex
	got  []jobs.CoalescedItem
	qs   []string
	fail error
}

func (i *items) EnqueueItem(_ context.Context, queue string, it jobs.CoalescedItem) (jobs.Result, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.fail != nil {
		return jobs.Result{}, i.fail
	}
	i.got = append(i.got, it)
	i.qs = append(i.qs, queue)
	return jobs.Result{TaskID: it.ID, Queue: queue, Coalesced: true}, nil
}

func (i *items) list() []jobs.CoalescedItem {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]jobs.CoalescedItem(nil), i.got...)
}

func (i *items) setFail(err error) {
	i.mu.Lock()
	i.fail = err
	i.mu.Unlock()
}

// fixture is a Store on a miniredis (or a real Redis: mr is nil), with a
// test clock.
type fixture struct {
	mr    *miniredis.Miniredis
	rdb   *redis.Client
	clock *clock
	items *items
	st    *Store
}

func newFixture(t testing.TB, tweak ...func(*Config)) *fixture {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return newFixtureOn(t, mr, rdb, tweak...)
}

// newRealFixture is newFixture on a real redis-server (the test is
// skipped without one).
func newRealFixture(t testing.TB, tweak ...func(*Config)) *fixture {
	t.Helper()
	return newFixtureOn(t, nil, redistest.Start(t).Client(t), tweak...)
}

// onBoth runs fn as two parallel subtests: on miniredis, and on a real
// redis-server, whose scripts and stream commands are the ones that count.
func onBoth(t *testing.T, fn func(t *testing.T, mk func(...func(*Config)) *fixture)) {
	t.Helper()
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		fn(t, func(tw ...func(*Config)) *fixture { return newFixture(t, tw...) })
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		fn(t, func(tw ...func(*Config)) *fixture { return newRealFixture(t, tw...) })
	})
}

func newFixtureOn(t testing.TB, mr *miniredis.Miniredis, rdb *redis.Client, tweak ...func(*Config)) *fixture {
	t.Helper()
	f := &fixture{mr: mr, rdb: rdb, clock: newClock(t0), items: &items{}}
	cfg := Config{Redis: rdb, Items: f.items, Logger: quietLogger(), Now: f.clock.Now, CacheTTL: time.Hour, StaleFor: time.Hour}
	for _, fn := range tweak {
		fn(&cfg)
	}
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	return f
}

func mustCreate(t testing.TB, st *Store, in Input) Silence {
	t.Helper()
	if in.CreatedBy == "" {
		in.CreatedBy = "test"
	}
	sil, err := st.Create(context.Background(), in)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return sil
}

func eq(name, value string) Matcher { return Matcher{Name: name, Value: value} }
func re(name, value string) Matcher { return Matcher{Name: name, Value: value, IsRegex: true} }
