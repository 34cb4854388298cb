package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// waitLimit bounds every wait of the tests; reaching it is a failure.
const waitLimit = 15 * time.Second

// recorder is an alerts.Dispatcher that records what it is given. fail,
// when set, decides per call whether the dispatch fails (nothing recorded).
type recorder struct {
	mu       sync.Mutex
	got      []alerts.Alert
	failures int
	fail     func(call int, a alerts.Alert) error
	calls    int
	ch       chan alerts.Alert
	failed   chan error
	// before, when set, is called at the start of every Dispatch, outside
	// the lock (a test may block in it).
	before func(batch []alerts.Alert)
}

func newRecorder() *recorder {
	return &recorder{ch: make(chan alerts.Alert, 100), failed: make(chan error, 100)}
}

func (r *recorder) Dispatch(_ context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	r.mu.Lock()
	before := r.before
	r.mu.Unlock()
	if before != nil {
		before(batch)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out alerts.Dispatched
	for _, a := range batch {
		r.calls++
		if r.fail != nil {
			if err := r.fail(r.calls, a); err != nil {
				r.failures++
				select {
				case r.failed <- err:
				default:
				}
				return alerts.Dispatched{}, err
			}
		}
		if err := a.Validate(); err != nil {
			return alerts.Dispatched{}, err
		}
		r.got = append(r.got, a)
		r.ch <- a
		out.Messages = append(out.Messages, jobs.Result{TaskID: jobs.IdempotencyID("", a.Fingerprint), Queue: jobs.QueueCritical})
	}
	return out, nil
}

func (r *recorder) setFail(f func(call int, a alerts.Alert) error) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}

func (r *recorder) setBefore(f func(batch []alerts.Alert)) {
	r.mu.Lock()
	r.before = f
	r.mu.Unlock()
}

// callCount is the number of alerts Dispatch was called with, failed or not.
func (r *recorder) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func (r *recorder) alerts() []alerts.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alerts.Alert(nil), r.got...)
}

// next waits for the next recorded alert.
func (r *recorder) next(t *testing.T) alerts.Alert {
	t.Helper()
	select {
	case a := <-r.ch:
		return a
	case <-time.After(waitLimit):
		t.Fatalf("no alert dispatched within %v; got %d so far", waitLimit, len(r.alerts()))
		return alerts.Alert{}
	}
}

// nextFailure waits for the next failed dispatch.
func (r *recorder) nextFailure(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.failed:
		return err
	case <-time.After(waitLimit):
		t.Fatalf("no failed dispatch within %v", waitLimit)
		return nil
	}
}

var errRedisGone = fmt.Errorf("%w: connection refused (test)", jobs.ErrUnavailable)

// checkCounter counts completed checks per checker, so a test can wait
// until every checker has run whole checks after some event.
type checkCounter struct {
	mu      sync.Mutex
	counts  []int
	errs    []error
	changed chan struct{}
}

func newCheckCounter(n int) *checkCounter {
	return &checkCounter{counts: make([]int, n), changed: make(chan struct{})}
}

func (c *checkCounter) hook(i int) func(checkResult) {
	return func(res checkResult) {
		c.mu.Lock()
		c.counts[i]++
		if res.Err != nil {
			c.errs = append(c.errs, res.Err)
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

// waitRounds waits until every checker has completed n more checks than
// when it was called; with n ≥ 2, each has run at least one whole check
// that started after the call.
func (c *checkCounter) waitRounds(t *testing.T, n int) {
	t.Helper()
	c.mu.Lock()
	want := make([]int, len(c.counts))
	for i, v := range c.counts {
		want[i] = v + n
	}
	c.mu.Unlock()
	deadline := time.After(waitLimit)
	for {
		c.mu.Lock()
		ok := true
		for i, v := range c.counts {
			if v < want[i] {
				ok = false
			}
		}
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("checkers did not complete %d more checks within %v", n, waitLimit)
		}
	}
}

// testConfig is the base config of the tests: fast checks, default grace
// 10% of the interval with no minimum.
func testConfig(rdb redis.UniversalClient, d alerts.Dispatcher) Config {
	return Config{
		Redis:           rdb,
		Dispatcher:      d,
		CheckInterval:   minCheckInterval,
		DispatchTimeout: 2 * time.Second,
		MinDefaultGrace: time.Microsecond,
		Logger:          slog.New(slog.DiscardHandler),
	}
}

// harness is a Redis server with n checkers (replicas, each with its own
// client) and a handler, all dispatching to one recorder.
type harness struct {
	srv     *redistest.Server
	rdb     *redis.Client
	rec     *recorder
	checks  *checkCounter
	handler http.Handler
}

type harnessOpts struct {
	checkers int
	redis    redistest.Options
	tweak    func(*Config)
	// setup, when set, is called with each checker before it starts.
	setup func(i int, c *Checker)
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	srv := redistest.Start(t, o.redis)
	h := &harness{srv: srv, rdb: srv.Client(t), rec: newRecorder(), checks: newCheckCounter(o.checkers)}
	for i := 0; i < o.checkers; i++ {
		cfg := testConfig(srv.Client(t), h.rec)
		if o.tweak != nil {
			o.tweak(&cfg)
		}
		c, err := NewChecker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.SetAfterCheck(h.checks.hook(i))
		if o.setup != nil {
			o.setup(i, c)
		}
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Shutdown)
	}
	h.handler = newTestHandler(t, srv.Client(t), h.rec, o.tweak)
	return h
}

func newTestHandler(t *testing.T, rdb redis.UniversalClient, d alerts.Dispatcher, tweak func(*Config)) http.Handler {
	t.Helper()
	cfg := testConfig(rdb, d)
	if tweak != nil {
		tweak(&cfg)
	}
	hd, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hd
}

// do sends one request to handler and returns the recorded answer.
func do(handler http.Handler, method, target, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, req)
	return w
}

// mustPing pings and decodes the answer, failing unless the status is want.
func mustPing(t *testing.T, handler http.Handler, target, body string, want int) Heartbeat {
	t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	w := do(handler, http.MethodPut, target, ct, body)
	if w.Code != want {
		t.Fatalf("PUT %s: status %d, want %d; body %s", target, w.Code, want, w.Body)
	}
	var hb Heartbeat
	if err := json.Unmarshal(w.Body.Bytes(), &hb); err != nil {
		t.Fatalf("PUT %s: decode %s: %v", target, w.Body, err)
	}
	return hb
}

// errorBody decodes a JSON error answer.
func errorBody(t *testing.T, w *httptest.ResponseRecorder) httpapi.ErrorBody {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error answer has Content-Type %q, want JSON; body %s", ct, w.Body)
	}
	var eb httpapi.ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil {
		t.Fatalf("decode error body %s: %v", w.Body, err)
	}
	return eb
}

// outboxLen is the number of notifications waiting in the outbox.
func outboxLen(t *testing.T, rdb redis.UniversalClient) int64 {
	t.Helper()
	n, err := rdb.ZCard(context.Background(), keys.HeartbeatOutbox()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func isUnavailable(err error) bool { return errors.Is(err, jobs.ErrUnavailable) }

func itoa(n int64) string { return fmt.Sprint(n) }

// getHeartbeat reads one heartbeat through the API.
func getHeartbeat(t *testing.T, h *harness, name string) Heartbeat {
	t.Helper()
	w := do(h.handler, http.MethodGet, "/v1/heartbeats/"+name, "", "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, w.Code, w.Body)
	}
	var hb Heartbeat
	if err := json.Unmarshal(w.Body.Bytes(), &hb); err != nil {
		t.Fatal(err)
	}
	return hb
}

// backdate moves a heartbeat's deadline to the distant past, as if its
// pings had stopped long ago.
func backdate(t *testing.T, rdb redis.UniversalClient, name string) {
	t.Helper()
	ctx := context.Background()
	raw, err := rdb.HGet(ctx, keys.HeartbeatRecords(), name).Result()
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		t.Fatal(err)
	}
	rec["deadline"] = "1000000"
	b, _ := json.Marshal(rec)
	if err := rdb.HSet(ctx, keys.HeartbeatRecords(), name, b).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, keys.HeartbeatDeadlines(), redis.Z{Score: 1e6, Member: name}).Err(); err != nil {
		t.Fatal(err)
	}
}

func timeAfter() <-chan time.Time { return time.After(waitLimit) }

// gate holds the first caller that passes it until open is called; later
// callers pass at once. reached is closed when the first caller arrives.
type gate struct {
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{reached: make(chan struct{}), release: make(chan struct{})} }

// pass blocks the first caller until open.
func (g *gate) pass() {
	first := false
	g.once.Do(func() { first = true; close(g.reached) })
	if first {
		<-g.release
	}
}

// wait waits until the first caller has arrived.
func (g *gate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.reached:
	case <-time.After(waitLimit):
		t.Fatalf("nothing reached the gate within %v", waitLimit)
	}
}

func (g *gate) open() { close(g.release) }

// fakeClock is a settable clock for the scripts (Config.now), so a test
// can run a schedule's days in milliseconds.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock on by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// withClock is a harness tweak that drives every script from clock.
func withClock(clock *fakeClock) func(*Config) {
	return func(c *Config) { c.now = clock.Now }
}

// send sends a signal (a ping when sig is "") and decodes the answer,
// failing unless the status is want.
func send(t *testing.T, handler http.Handler, name, sig, query, body string, want int) Heartbeat {
	t.Helper()
	target := "/v1/heartbeats/" + name
	if sig != "" {
		target += "/" + sig
	}
	if query != "" {
		target += "?" + query
	}
	w := do(handler, http.MethodPost, target, "text/plain", body)
	if w.Code != want {
		t.Fatalf("POST %s: status %d, want %d; body %s", target, w.Code, want, w.Body)
	}
	var hb Heartbeat
	if err := json.Unmarshal(w.Body.Bytes(), &hb); err != nil {
		t.Fatalf("POST %s: decode %s: %v", target, w.Body, err)
	}
	return hb
}
