package app

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

// queueInspector is the part of *asynq.Inspector that queueCollector reads.
type queueInspector interface {
	Queues() ([]string, error)
	GetQueueInfo(queue string) (*asynq.QueueInfo, error)
}

// The asynq_* series of the producer's /metrics. Their names, help texts,
// labels and types are those the collector of github.com/hibiken/asynq/x
// exported before Herald had its own, so that dashboards, alerts and
// docs/METRICS.md keep working unchanged.
var (
	// Despite "_total", a gauge: the number of tasks in each state now.
	asynqTasksDesc = prometheus.NewDesc("asynq_tasks_enqueued_total",
		"Number of tasks enqueued; broken down by queue and state.",
		[]string{"queue", "state"}, nil)
	asynqSizeDesc = prometheus.NewDesc("asynq_queue_size",
		"Number of tasks in a queue",
		[]string{"queue"}, nil)
	asynqLatencyDesc = prometheus.NewDesc("asynq_queue_latency_seconds",
		"Number of seconds the oldest pending task is waiting in pending state to be processed.",
		[]string{"queue"}, nil)
	asynqMemoryDesc = prometheus.NewDesc("asynq_queue_memory_usage_approx_bytes",
		"Number of memory used by a given queue (approximated number by sampling).",
		[]string{"queue"}, nil)
	asynqProcessedDesc = prometheus.NewDesc("asynq_tasks_processed_total",
		"Number of tasks processed (both succeeded and failed); broken down by queue",
		[]string{"queue"}, nil)
	asynqFailedDesc = prometheus.NewDesc("asynq_tasks_failed_total",
		"Number of tasks failed; broken down by queue",
		[]string{"queue"}, nil)
	asynqPausedDesc = prometheus.NewDesc("asynq_queue_paused_total",
		"Number of queues paused",
		[]string{"queue"}, nil)
)

// queueCollector exports asynq's statistics of every queue in Redis
// (asynq_queue_size, asynq_queue_latency_seconds,
// asynq_tasks_enqueued_total{state}, ...), read through asynq's Inspector
// at each collection: about a dozen Redis commands per queue, which is why
// the producer wraps it in a cachedCollector.
//
// Its Describe sends nothing, which makes it an unchecked collector:
// registering it does not query Redis, and a Redis that is down at start-up
// does not change what gets registered.
type queueCollector struct {
	insp queueInspector
	log  *slog.Logger
}

// newQueueCollector returns the collector of insp's queues, logging the
// collections that fail to log (slog's default logger if nil).
func newQueueCollector(insp queueInspector, log *slog.Logger) queueCollector {
	if log == nil {
		log = slog.Default()
	}
	return queueCollector{insp: insp, log: log}
}

// Describe implements prometheus.Collector for an unchecked collector.
func (queueCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector. When Redis cannot be read it
// logs one line and sends the series of the queues it could read (none if
// the list of queues itself failed); Herald's other series are unaffected.
func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	infos, err := c.read()
	if err != nil {
		c.log.Error("asynq queue metrics not collected", "error", err)
	}
	for _, info := range infos {
		sendQueueInfo(ch, info)
	}
}

// read returns the statistics of every queue asynq knows. A queue that
// cannot be read (for instance one deleted since the list was taken) is
// left out and its error joined to the returned one.
func (c queueCollector) read() ([]*asynq.QueueInfo, error) {
	names, err := c.insp.Queues()
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	infos := make([]*asynq.QueueInfo, 0, len(names))
	var errs []error
	for _, name := range names {
		info, err := c.insp.GetQueueInfo(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("queue %q: %w", name, err))
			continue
		}
		infos = append(infos, info)
	}
	return infos, errors.Join(errs...)
}

// sendQueueInfo sends the series of one queue.
func sendQueueInfo(ch chan<- prometheus.Metric, info *asynq.QueueInfo) {
	q := info.Queue
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, s := range []struct {
		state string
		n     int
	}{
		{"active", info.Active},
		{"pending", info.Pending},
		{"scheduled", info.Scheduled},
		{"retry", info.Retry},
		{"archived", info.Archived},
		{"completed", info.Completed},
	} {
		gauge(asynqTasksDesc, float64(s.n), q, s.state)
	}
	gauge(asynqSizeDesc, float64(info.Size), q)
	gauge(asynqLatencyDesc, info.Latency.Seconds(), q)
	gauge(asynqMemoryDesc, float64(info.MemoryUsage), q)
	paused := 0.0
	if info.Paused {
		paused = 1
	}
	gauge(asynqPausedDesc, paused, q)
	ch <- prometheus.MustNewConstMetric(asynqProcessedDesc, prometheus.CounterValue, float64(info.ProcessedTotal), q)
	ch <- prometheus.MustNewConstMetric(asynqFailedDesc, prometheus.CounterValue, float64(info.FailedTotal), q)
}
