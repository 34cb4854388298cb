package statushook_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/test/redistest"
)

// testKey is the master key of the tests.
const testKey = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// rig is a real redis-server, an Emitter on it and the deliverers a test
// starts, with their metrics and logs.
type rig struct {
	t       *testing.T
	ctx     context.Context
	redis   *redistest.Server
	rdb     *redis.Client
	cfg     statushook.Config
	emitter *statushook.Emitter
	reg     *prometheus.Registry
	logs    *syncBuffer
	// maxIdle is the deliverers' MaxIdle; 0 is the broker's default.
	maxIdle time.Duration
}

// newRig starts redis-server; cfg's loopback allow-list and master key are
// set unless edit changes them.
func newRig(t *testing.T, edit func(*statushook.Config)) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	srv := redistest.Start(t)
	r := &rig{t: t, ctx: ctx, redis: srv, rdb: srv.Client(t), reg: prometheus.NewRegistry(), logs: &syncBuffer{},
		cfg: statushook.Config{Secret: testKey, Allow: []string{"127.0.0.1:*"}, Schedule: statushook.Schedule{20 * time.Millisecond, 20 * time.Millisecond}}}
	if edit != nil {
		edit(&r.cfg)
	}
	r.cfg = r.cfg.WithDefaults()
	em, err := statushook.NewEmitter(r.rdb, r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.emitter = em
	return r
}

// startDeliverer runs a deliverer (with its own client) until the test
// ends or the returned stop is called.
func (r *rig) startDeliverer() (stop func()) {
	r.t.Helper()
	d, err := statushook.NewDeliverer(statushook.DelivererConfig{
		Client: redis.NewClient(&redis.Options{Addr: r.redis.Addr}), Callbacks: r.cfg, ShutdownTimeout: 5 * time.Second, MaxIdle: r.maxIdle,
		Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Registerer: r.reg,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := d.Start(r.ctx); err != nil {
		r.t.Fatal(err)
	}
	r.eventually("the deliverer serves", d.Ready)
	var once sync.Once
	stop = func() { once.Do(d.Shutdown) }
	r.t.Cleanup(stop)
	return stop
}

// emit emits an event of type message.sent for the task id to url.
func (r *rig) emit(url, taskID string) statushook.Event {
	r.t.Helper()
	ev := statushook.Event{ID: statushook.EventID(taskID, statushook.TypeMessageSent), Type: statushook.TypeMessageSent,
		Timestamp: time.Now(), Data: map[string]any{"task_id": taskID, "message_ids": []int{7}}}
	if err := r.emitter.Emit(r.ctx, url, ev); err != nil {
		r.t.Fatal(err)
	}
	return ev
}

// eventually waits until cond holds; the test fails when the rig's time
// runs out first.
func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	for !cond() {
		if r.ctx.Err() != nil {
			r.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// deliveries is herald_callback_deliveries_total{outcome}.
func (r *rig) deliveries(outcome string) int {
	return r.counter("herald_callback_deliveries_total", outcome)
}

// disabledTotal is herald_callback_endpoints_disabled_total{reason}.
func (r *rig) disabledTotal(reason string) int {
	return r.counter("herald_callback_endpoints_disabled_total", reason)
}

// counter reads the series of a counter vector by its one label value.
func (r *rig) counter(name, label string) int {
	r.t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == label {
				return int(m.GetCounter().GetValue())
			}
		}
	}
	return 0
}

// archived returns the callbacks' archived tasks.
func (r *rig) archived() []*asynq.TaskInfo {
	r.t.Helper()
	insp := asynq.NewInspectorFromRedisClient(r.rdb)
	tasks, err := insp.ListArchivedTasks(statushook.Queue)
	if err != nil {
		return nil // the queue does not exist yet
	}
	return tasks
}

// waitArchived waits until n tasks are archived and returns them.
func (r *rig) waitArchived(n int) []*asynq.TaskInfo {
	r.t.Helper()
	var tasks []*asynq.TaskInfo
	r.eventually("events are archived", func() bool { tasks = r.archived(); return len(tasks) >= n })
	return tasks
}

// request is one request a receiver got.
type request struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a loopback test server that answers each request as answer
// says (by its index, from 0) and keeps every request.
type receiver struct {
	*httptest.Server
	answer func(n int, w http.ResponseWriter)

	mu   sync.Mutex
	reqs []request
}

// newReceiver starts a receiver; a nil answer is 204 to everything.
func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

// newReceiverOn is newReceiver listening on addr.
func newReceiverOn(t *testing.T, addr string, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{answer: answer}
	rc.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(rc.serve)}}
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.reqs)
	rc.reqs = append(rc.reqs, request{header: r.Header.Clone(), body: body, at: time.Now()})
	rc.mu.Unlock()
	if rc.answer == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rc.answer(n, w)
}

// requests returns what the receiver got so far.
func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.reqs...)
}

// count is how many requests it got.
func (rc *receiver) count() int { return len(rc.requests()) }

// syncBuffer is a log sink the deliverers' goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
