package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynq/x/metrics"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/worker"
)

// NewEnqueuer builds the enqueue side from the producer's settings.
func NewEnqueuer(rdb redis.UniversalClient, cfg config.Producer) *jobs.Enqueuer {
	return jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{
		Queues:            cfg.Queues,
		DefaultQueue:      cfg.DefaultQueue,
		MaxRetry:          cfg.MaxRetry,
		Timeout:           cfg.TaskTimeout,
		IdempotencyWindow: cfg.IdempotencyWindow,
		Limits:            jobs.Limits{MaxTextLen: cfg.MaxTextLen},
	})
}

// Version is Herald's release version as herald_build_info reports it. The
// release build sets it with
// -ldflags "-X github.com/herald-dev/herald/internal/app.Version=v1.2.3";
// when empty, the main module's version from the Go build info is used.
var Version string

// NewRegistry returns a Prometheus registry with the Go runtime and process
// collectors and herald_build_info.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(),
	)
	return reg
}

// buildInfo is the herald_build_info gauge: always 1, with the version and
// the Go version as labels, to join on or to spot mixed versions in a fleet.
func buildInfo() prometheus.Gauge {
	version := Version
	if version == "" {
		version = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			version = bi.Main.Version
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "herald_build_info",
		Help:        "Always 1; the labels name the Herald version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// queueCollector exports asynq's queue metrics (asynq_queue_size,
// asynq_queue_latency_seconds, asynq_tasks_enqueued_total{state}, ...)
// through the x/metrics collector. Its Describe sends nothing, which makes
// it an unchecked collector: registering it does not query Redis (the
// x/metrics collector would, to learn the queue names), and a Redis that is
// down at start-up does not change what gets registered.
type queueCollector struct{ *metrics.QueueMetricsCollector }

// Describe implements prometheus.Collector for an unchecked collector.
func (queueCollector) Describe(chan<- *prometheus.Desc) {}

// ProducerHandler builds the API (with the web UI when configured) on rdb.
// connOpt reaches the same Redis for the web UI. The returned cleanup closes
// what it opened.
func ProducerHandler(cfg config.Producer, rdb redis.UniversalClient, connOpt asynq.RedisConnOpt, reg *prometheus.Registry, log *slog.Logger) (http.Handler, func(), error) {
	token, err := cfg.Token()
	if err != nil {
		return nil, nil, err
	}
	// asynq's queue metrics come from an Inspector with its own connection
	// pool on the same Redis, closed by cleanup.
	insp := asynq.NewInspector(connOpt)
	if err := reg.Register(queueCollector{metrics.NewQueueMetricsCollector(insp)}); err != nil {
		_ = insp.Close()
		return nil, nil, fmt.Errorf("register asynq queue metrics: %w", err)
	}
	enq := NewEnqueuer(rdb, cfg)
	var ui *asynqmon.HTTPHandler
	if cfg.MonitoringPath != "" {
		ui = asynqmon.New(asynqmon.Options{
			RootPath:         cfg.MonitoringPath,
			RedisConnOpt:     connOpt,
			PayloadFormatter: PayloadFormatter,
			ReadOnly:         cfg.MonitoringReadOnly,
		})
	}
	apiCfg := producer.Config{
		Enqueuer: enq, Redis: rdb, APIToken: token, AuthDisabled: cfg.AuthDisabled,
		MaxBodyBytes: cfg.MaxBodyBytes, Logger: log, Registerer: reg,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}
	if ui != nil {
		apiCfg.Monitoring, apiCfg.MonitoringPath = ui, cfg.MonitoringPath
	}
	cleanup := func() {
		_ = enq.Close()
		if ui != nil {
			_ = ui.Close()
		}
		_ = insp.Close()
	}
	api, err := producer.NewAPI(apiCfg)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return api.Handler(), cleanup, nil
}

// RunProducer serves the producer API until ctx ends.
func RunProducer(ctx context.Context, cfg config.Producer, log *slog.Logger) error {
	opts, err := cfg.Redis.UniversalOptions()
	if err != nil {
		return err
	}
	connOpt, err := cfg.Redis.ConnOpt()
	if err != nil {
		return err
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	h, cleanup, err := ProducerHandler(cfg, rdb, connOpt, NewRegistry(), log)
	if err != nil {
		return err
	}
	defer cleanup()
	log.Info("producer starting", "listen", cfg.Listen, "redis", cfg.Redis.Redacted(), "monitoring", cfg.MonitoringPath, "auth", !cfg.AuthDisabled)
	if err := worker.ListenAndServe(ctx, cfg.Listen, h, log); err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	return nil
}
