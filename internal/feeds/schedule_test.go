package feeds

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		interval, ceiling time.Duration
		n                 int
		want              time.Duration
	}{
		{time.Minute, time.Hour, 1, time.Minute},
		{time.Minute, time.Hour, 2, 2 * time.Minute},
		{time.Minute, time.Hour, 6, 32 * time.Minute},
		{time.Minute, time.Hour, 7, time.Hour},
		{time.Minute, time.Hour, 1000, time.Hour},
		{2 * time.Hour, time.Hour, 3, 2 * time.Hour}, // the ceiling never undercuts the interval
		{5 * time.Minute, time.Hour, 0, 5 * time.Minute},
	} {
		if got := backoff(tc.interval, tc.ceiling, tc.n); got != tc.want {
			t.Errorf("backoff(%v, %v, %d) = %v, want %v", tc.interval, tc.ceiling, tc.n, got, tc.want)
		}
	}
}

func TestFirstPollsAreSpread(t *testing.T) {
	t.Parallel()
	const n, buckets = 100, 10
	interval := 5 * time.Minute
	var feeds []feed
	for i := 0; i < n; i++ {
		feeds = append(feeds, feed{Name: fmt.Sprintf("feed-%03d", i), Interval: interval})
	}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a := newAgenda(feeds, start)
	counts := make([]int, buckets)
	for _, s := range *a {
		off := s.due.Sub(start)
		if off < 0 || off >= interval {
			t.Fatalf("feed %s first polled at +%v, outside [0, %v)", s.feed.Name, off, interval)
		}
		if off != firstOffset(s.feed.Name, interval) {
			t.Fatalf("offset of %s is not deterministic", s.feed.Name)
		}
		counts[int(off*buckets/interval)]++
	}
	// Evenly spread, each tenth of the interval holds about 10 first polls;
	// a burst would put many in one tenth.
	for i, c := range counts {
		if c < 3 || c > 20 {
			t.Fatalf("tenth %d of the interval holds %d of %d first polls (all: %v); want 3..20", i, c, n, counts)
		}
	}
	// Different intervals give different but bounded offsets.
	if off := firstOffset("feed-000", time.Hour); off < 0 || off >= time.Hour {
		t.Fatalf("offset %v outside the hour", off)
	}
}

func TestRunBacksOffFailingFeed(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 1)...))
	srv.fail(http.StatusInternalServerError, nil)
	clk := newFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	events := make(chan pollEvent, 100)
	interval := time.Minute
	p := newPoller(t, rdb, &recorder{}, []feed{{Name: "down", URL: srv.URL(), Interval: interval}}, func(c *Config) {
		c.clock = clk
		c.MaxBackoff = 8 * time.Minute
		c.polled = func(e pollEvent) { events <- e }
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	start := clk.Now()
	end := start.Add(40 * time.Minute)
	var delays []time.Duration
	for {
		at := clk.nextTimer(t)
		if at.After(end) {
			break
		}
		clk.Advance(at.Sub(clk.Now()))
		e := <-events
		if e.outcome.result != resultHTTPError {
			t.Fatalf("poll result %q, want http_error", e.outcome.result)
		}
		delays = append(delays, e.delay)
	}
	// Polls at offset + 0, 1, 3, 7, 15, 23, 31 and 39 minutes (the offset
	// is under the 1m interval): 8 in 40 minutes, where a feed polled every
	// interval would be fetched 40 times.
	want := []time.Duration{1, 2, 4, 8, 8, 8, 8, 8}
	wantPolls := len(want)
	if len(delays) != wantPolls {
		t.Fatalf("%d polls in 40 simulated minutes (waits %v), want %d", len(delays), delays, wantPolls)
	}
	for i, d := range delays {
		if w := want[i] * time.Minute; d != w {
			t.Fatalf("wait after failure %d is %v, want %v (all: %v)", i+1, d, w, delays)
		}
	}
	if req, _ := srv.stats(); req != wantPolls {
		t.Fatalf("server got %d requests, want %d (one per poll); without backoff it would be 40", req, wantPolls)
	}

	// Recovery: the next poll succeeds and the wait is the interval again.
	srv.fail(0, nil)
	at := clk.nextTimer(t)
	clk.Advance(at.Sub(clk.Now()))
	if e := <-events; e.outcome.result != resultFirst || e.delay != interval {
		t.Fatalf("after recovery: result %q wait %v, want first and %v", e.outcome.result, e.delay, interval)
	}
}

func TestRunBoundsConcurrency(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	const feeds, bound = 100, 4

	var (
		mu          sync.Mutex
		inFlight    int
		maxInFlight int
	)
	arrived := make(chan struct{}, feeds)
	release := make(chan struct{})
	body := rssDoc(numbered(1, 2)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)

	interval := 5 * time.Minute
	var list []feed
	for i := 0; i < feeds; i++ {
		list = append(list, feed{Name: fmt.Sprintf("many-%03d", i), URL: fmt.Sprintf("%s/%d.xml", srv.URL, i), Interval: interval})
	}
	clk := newFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	events := make(chan pollEvent, feeds)
	p := newPoller(t, rdb, &recorder{}, list, func(c *Config) {
		c.clock = clk
		c.Concurrency = bound
		c.HTTPClient = srv.Client()
		c.polled = func(e pollEvent) { events <- e }
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- p.Run(ctx) }()

	// Make every first poll due at once: the worst case for a burst.
	clk.nextTimer(t)
	clk.Advance(interval)
	for i := 0; i < bound; i++ {
		<-arrived
	}
	// bound requests are waiting in the handler; each one let through
	// frees a slot for exactly one more.
	results := map[result]int{}
	for i := 0; i < feeds; i++ {
		release <- struct{}{}
		e := <-events
		results[e.outcome.result]++
		if i+bound < feeds {
			<-arrived
		}
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if maxInFlight != bound {
		t.Fatalf("at most %d requests were in flight at once, want exactly the bound %d", maxInFlight, bound)
	}
	if results[resultFirst] != feeds {
		t.Fatalf("results %v, want %d first polls", results, feeds)
	}
}

func TestRunStopsWithPollsInFlight(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // never answers; the poller must cancel
	}))
	t.Cleanup(srv.Close)
	clk := newFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	p := newPoller(t, rdb, &recorder{}, []feed{{Name: "hang", URL: srv.URL, Interval: time.Minute}}, func(c *Config) {
		c.clock = clk
		c.HTTPClient = srv.Client()
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- p.Run(ctx) }()
	clk.nextTimer(t)
	clk.Advance(time.Minute)
	<-arrived
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := p.Run(context.Background()); err == nil {
		t.Fatal("a second Run was accepted")
	}
}
