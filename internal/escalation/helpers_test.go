package escalation

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/test/redistest"
)

// outbox is an enqueuer that keeps what it is given, refusing a repeated
// idempotency key as the Enqueuer does (a duplicate stores nothing).
// fail, when set, decides per message whether the call fails after
// storing it, as a producer killed between the enqueue and what follows.
type outbox struct {
	mu    sync.Mutex
	byKey map[string]jobs.SendMessage
	order []jobs.SendMessage
	queue map[string]string // by idempotency key
	dups  int
	fail  func(m jobs.SendMessage) error
}

func newOutbox() *outbox {
	return &outbox{byKey: map[string]jobs.SendMessage{}, queue: map[string]string{}}
}

func (o *outbox) Enqueue(_ context.Context, req jobs.Request) (jobs.Result, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := req.Message
	id := jobs.IdempotencyID("", m.IdempotencyKey)
	if _, dup := o.byKey[m.IdempotencyKey]; dup {
		o.dups++
		return jobs.Result{TaskID: id, Duplicate: true}, nil
	}
	o.byKey[m.IdempotencyKey] = m
	o.queue[m.IdempotencyKey] = req.Queue
	o.order = append(o.order, m)
	if o.fail != nil {
		if err := o.fail(m); err != nil {
			return jobs.Result{}, err
		}
	}
	return jobs.Result{TaskID: id, Queue: req.Queue}, nil
}

// sent returns the messages stored so far.
func (o *outbox) sent() []jobs.SendMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]jobs.SendMessage(nil), o.order...)
}

// to returns the texts sent to chat, in order.
func (o *outbox) to(chat string) []string {
	var out []string
	for _, m := range o.sent() {
		if m.Chat == chat {
			out = append(out, m.Text)
		}
	}
	return out
}

// outcomes is a Deliveries that answers from a map of task ids; a task it
// does not know is not settled.
type outcomes struct {
	mu sync.Mutex
	m  map[string]Outcome
}

func (d *outcomes) Outcome(_ context.Context, _ string, task string) (Outcome, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[task], nil
}

func (d *outcomes) set(task string, o Outcome) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]Outcome{}
	}
	d.m[task] = o
}

// fakeClock is the scripts' clock, moved by the test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) us() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.UnixMicro()
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) time() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// redisClient starts a redis-server for the test.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	return redistest.Start(t).Client(t)
}

// quiet discards the engines' logs.
var quiet = slog.New(slog.DiscardHandler)

// The people of the tests.
var (
	alice = oncall.User{ID: 1001, Name: "Alice", Username: "alice"}
	bob   = oncall.User{ID: 1002, Name: "Bob", Username: "bob_ops"}
	carol = oncall.User{ID: 1003, Name: "Carol"}
)

// The alert's home chat in the tests.
const homeChat = "-1001000000001"

// threePolicy is the worked example's policy: the alert's chat, then the
// person on call after 2 minutes, then Carol after 4 more.
func threePolicy() Policy {
	return Policy{Name: "db-critical", Steps: []Step{
		{Targets: []Target{{Chat: homeChat}}, Wait: 2 * time.Minute},
		{Targets: []Target{{Schedule: "primary"}}, Wait: 4 * time.Minute},
		{Targets: []Target{{User: carol}}, Wait: 10 * time.Minute},
	}}
}

// weekly is a schedule on which Alice is on call the whole of 2026's
// first weeks, then Bob.
func weekly() oncall.Schedule {
	return oncall.Schedule{Name: "primary", Layers: []oncall.Rotation{{
		Users: []oncall.User{alice, bob}, Length: oncall.Weekly, Handoff: oncall.Clock{Hour: 9},
		Weekday: time.Monday, Location: time.UTC, Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	}}}
}

// rig is an engine on a real Redis with a fake clock, an outbox and
// outcomes.
type rig struct {
	t     *testing.T
	rdb   *redis.Client
	clock *fakeClock
	out   *outbox
	dl    *outcomes
	cat   Catalog
	// schedules are the roster's.
	schedules roster.Catalog
	store     *Store
}

func newRig(t *testing.T, pol Policy) *rig {
	t.Helper()
	r := &rig{t: t, rdb: redisClient(t), clock: &fakeClock{now: time.Date(2026, 1, 7, 12, 0, 0, 0, time.UTC)}, out: newOutbox(), dl: &outcomes{}}
	r.cat = Catalog{Policies: map[string]Policy{pol.Name: pol}}
	r.schedules = roster.Catalog{Schedules: map[string]oncall.Schedule{"primary": weekly()}}
	r.store = NewStore(r.rdb, nil)
	r.store.clock = r.clock.us
	return r
}

// engine returns a new engine of the rig (several may run at once).
func (r *rig) engine(metrics *Metrics) *Engine {
	r.t.Helper()
	e, err := NewEngine(Config{Redis: r.rdb, Messages: r.out, Catalog: func() Catalog { return r.cat }, Deliveries: r.dl,
		Roster: &roster.Roster{Catalog: func() roster.Catalog { return r.schedules }, Overrides: roster.NewOverrides(r.rdb)}, Metrics: metrics, CheckInterval: 5 * time.Second, Logger: quiet, clock: r.clock.us})
	if err != nil {
		r.t.Fatal(err)
	}
	return e
}

// start begins the escalation of alert n on the route "db".
func (r *rig) start(n string, pol string) Start {
	r.t.Helper()
	st := Start{Bot: "", Route: "db", Identity: "alert-" + n, Policy: pol,
		Homes:   []Home{{Chat: homeChat, Thread: "alert/alert-" + n + "/db"}},
		Alert:   Subject{Title: "disk full " + n, Severity: "critical", Source: "test", Labels: map[string]string{"n": n}},
		FiredAt: r.clock.time()}
	ok, err := r.store.Begin(context.Background(), st)
	if err != nil || !ok {
		r.t.Fatalf("Begin(%s) = %v, %v", n, ok, err)
	}
	return st
}

// check runs one check of e and fails the test on error.
func (r *rig) check(e *Engine) int {
	r.t.Helper()
	n, err := e.Check(context.Background())
	if err != nil {
		r.t.Fatalf("Check: %v", err)
	}
	return n
}

// count counts the messages whose text contains s, per chat.
func count(msgs []jobs.SendMessage, chat, s string) int {
	n := 0
	for _, m := range msgs {
		if m.Chat == chat && strings.Contains(m.Text, s) {
			n++
		}
	}
	return n
}

// counter reads a counter.
func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

// observed reads a histogram's count and sum.
func observed(t *testing.T, o prometheus.Observer) (uint64, float64) {
	t.Helper()
	var d dto.Metric
	if err := o.(prometheus.Metric).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetHistogram().GetSampleCount(), d.GetHistogram().GetSampleSum()
}
