package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/hibiken/asynq"
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

// NewRegistry returns a Prometheus registry with the Go runtime and process
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// ProducerHandler builds the API (with the web UI when configured) on rdb.
// connOpt reaches the same Redis for the web UI. The returned cleanup closes
// what it opened.
func ProducerHandler(cfg config.Producer, rdb redis.UniversalClient, connOpt asynq.RedisConnOpt, reg *prometheus.Registry, log *slog.Logger) (http.Handler, func(), error) {
	token, err := cfg.Token()
	if err != nil {
		return nil, nil, err
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
	api, err := producer.NewAPI(apiCfg)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		_ = enq.Close()
		if ui != nil {
			_ = ui.Close()
		}
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
