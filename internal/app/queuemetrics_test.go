package app

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/herald-dev/herald/test/redistest"
)

// gatherQueueMetrics registers col alone on a registry and returns its
// series as "name{label=value,...}" (labels in the registry's order) →
// value, with the type of each name.
func gatherQueueMetrics(t *testing.T, col prometheus.Collector) (values map[string]float64, types map[string]dto.MetricType) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(col); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values, types = map[string]float64{}, map[string]dto.MetricType{}
	for _, mf := range mfs {
		types[mf.GetName()] = mf.GetType()
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue()
			if mf.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			values[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return values, types
}

// asynqMetricTypes are the types the x/metrics collector gave the series.
var asynqMetricTypes = map[string]dto.MetricType{
	"asynq_tasks_enqueued_total":            dto.MetricType_GAUGE,
	"asynq_queue_size":                      dto.MetricType_GAUGE,
	"asynq_queue_latency_seconds":           dto.MetricType_GAUGE,
	"asynq_queue_memory_usage_approx_bytes": dto.MetricType_GAUGE,
	"asynq_queue_paused_total":              dto.MetricType_GAUGE,
	"asynq_tasks_processed_total":           dto.MetricType_COUNTER,
	"asynq_tasks_failed_total":              dto.MetricType_COUNTER,
}

// TestQueueCollectorReadsRedis enqueues tasks in two queues on a real Redis
// and checks the series the collector exports for them.
func TestQueueCollectorReadsRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	defer client.Close()
	enqueue := func(queue string, opts ...asynq.Option) {
		t.Helper()
		if _, err := client.Enqueue(asynq.NewTask("test", nil), append(opts, asynq.Queue(queue))...); err != nil {
			t.Fatal(err)
		}
	}
	// alpha: 3 pending. beta: 1 pending, 2 scheduled, and paused.
	for range 3 {
		enqueue("alpha")
	}
	enqueue("beta")
	enqueue("beta", asynq.ProcessIn(time.Hour))
	enqueue("beta", asynq.ProcessIn(2*time.Hour))
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	if err := insp.PauseQueue("beta"); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	values, types := gatherQueueMetrics(t, newQueueCollector(insp, slog.New(slog.NewTextHandler(&logs, nil))))
	if logs.Len() > 0 {
		t.Errorf("collecting from a healthy Redis logged: %s", logs.String())
	}
	want := map[string]float64{
		"asynq_queue_size{queue=alpha}":            3,
		"asynq_queue_size{queue=beta}":             3,
		"asynq_queue_paused_total{queue=alpha}":    0,
		"asynq_queue_paused_total{queue=beta}":     1,
		"asynq_tasks_processed_total{queue=alpha}": 0,
		"asynq_tasks_failed_total{queue=beta}":     0,
	}
	for queue, states := range map[string][6]float64{
		// active, pending, scheduled, retry, archived, completed
		"alpha": {0, 3, 0, 0, 0, 0},
		"beta":  {0, 1, 2, 0, 0, 0},
	} {
		for i, state := range []string{"active", "pending", "scheduled", "retry", "archived", "completed"} {
			want["asynq_tasks_enqueued_total{queue="+queue+",state="+state+"}"] = states[i]
		}
	}
	for series, w := range want {
		got, ok := values[series]
		if !ok {
			t.Errorf("%s missing", series)
		} else if got != w {
			t.Errorf("%s = %v, want %v", series, got, w)
		}
	}
	for _, q := range []string{"alpha", "beta"} {
		for _, name := range []string{"asynq_queue_latency_seconds", "asynq_queue_memory_usage_approx_bytes"} {
			if _, ok := values[name+"{queue="+q+"}"]; !ok {
				t.Errorf("%s{queue=%s} missing", name, q)
			}
		}
	}
	// 2 queues × (6 states + 6 other series).
	if len(values) != 24 {
		t.Errorf("%d series, want 24: %v", len(values), values)
	}
	for name, w := range asynqMetricTypes {
		if got := types[name]; got != w {
			t.Errorf("%s is a %v, want a %v", name, got, w)
		}
	}
}

// TestQueueCollectorRedisDown: registering does not touch Redis (Describe
// sends nothing), and a collection without Redis sends no series and logs
// one line.
func TestQueueCollectorRedisDown(t *testing.T) {
	t.Parallel()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: "127.0.0.1:" + strconv.Itoa(port), DialTimeout: time.Second})
	defer insp.Close()
	var logs bytes.Buffer
	col := newQueueCollector(insp, slog.New(slog.NewTextHandler(&logs, nil)))
	descs := make(chan *prometheus.Desc, 10)
	col.Describe(descs)
	if len(descs) != 0 {
		t.Fatalf("Describe sent %d descriptors, want none (an unchecked collector)", len(descs))
	}
	values, _ := gatherQueueMetrics(t, col)
	if len(values) != 0 {
		t.Errorf("series without Redis: %v", values)
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "asynq queue metrics not collected") {
		t.Errorf("want one log line, got %d: %s", n, logs.String())
	}
}

// fakeInspector lists queues and answers for those in infos.
type fakeInspector struct {
	queues []string
	infos  map[string]*asynq.QueueInfo
}

func (f fakeInspector) Queues() ([]string, error) { return f.queues, nil }

func (f fakeInspector) GetQueueInfo(q string) (*asynq.QueueInfo, error) {
	if info, ok := f.infos[q]; ok {
		return info, nil
	}
	return nil, errors.New("queue not found")
}

// TestQueueCollectorSkipsUnreadableQueue: a queue that cannot be read (say,
// deleted between the list and its reading) is left out and logged; the
// other queues' series are still sent.
func TestQueueCollectorSkipsUnreadableQueue(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	col := newQueueCollector(fakeInspector{
		queues: []string{"gone", "kept"},
		infos:  map[string]*asynq.QueueInfo{"kept": {Queue: "kept", Size: 7, Pending: 7, Latency: 1500 * time.Millisecond}},
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	values, _ := gatherQueueMetrics(t, col)
	if got := values["asynq_queue_size{queue=kept}"]; got != 7 {
		t.Errorf("asynq_queue_size{queue=kept} = %v, want 7", got)
	}
	if got := values["asynq_queue_latency_seconds{queue=kept}"]; got != 1.5 {
		t.Errorf("asynq_queue_latency_seconds{queue=kept} = %v, want 1.5", got)
	}
	if len(values) != 12 {
		t.Errorf("%d series, want 12 (those of kept): %v", len(values), values)
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), `queue \"gone\"`) {
		t.Errorf("want one log line naming queue gone, got %d: %s", n, logs.String())
	}
}
