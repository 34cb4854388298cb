package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/httpapi"
)

// RunFeeds polls the feeds of path (HERALD_FEEDS_FILE when empty) until ctx
// ends, turning new items into alerts through the producer's routes. When
// cfg.Listen is set it serves /livez, /readyz and /metrics there. SIGHUP
// reloads the routing file; the feed list is read once at start.
func RunFeeds(ctx context.Context, cfg config.Producer, path string, log *slog.Logger) error {
	if path == "" {
		path = cfg.FeedsFile
	}
	if path == "" {
		return fmt.Errorf("no feed list: pass --config feeds.yaml or set %s", config.EnvFeedsFile)
	}
	file, err := feeds.LoadConfig(path)
	if err != nil {
		return err
	}
	opts, err := cfg.Redis.UniversalOptions()
	if err != nil {
		return err
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	if err := checkRedisAuth(ctx, rdb, cfg.Redis.Redacted()); err != nil {
		return err
	}
	enq := NewEnqueuer(rdb, cfg)
	defer enq.Close()
	dispatcher, router, err := NewRouter(cfg, enq, log)
	if err != nil {
		return err
	}
	if router == nil {
		return fmt.Errorf("feeds need routes: set %s or %s", config.EnvRoutesFile, config.EnvAlertsDefaultChat)
	}
	reg := NewRegistry()
	if cfg.Listen != "" {
		httpCtx, stop := context.WithCancel(ctx)
		defer stop()
		h := healthHandler(rdb, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		go func() {
			if err := httpapi.ListenAndServe(httpCtx, cfg.Listen, h, log); err != nil {
				log.Error("feeds health/metrics server failed", "error", err)
			}
		}()
	}
	stopHUP := reloadOnHUP(ctx, log, cfg.RoutesFile, func() error { return reloadRoutes(router, cfg.RoutesFile) })
	defer stopHUP()
	log.Info("feed poller starting", "feeds", len(file.Feeds), "file", path, "concurrency", cfg.FeedsConcurrency,
		"redis", cfg.Redis.Redacted())
	err = feeds.Run(ctx, feeds.Config{
		File: file, Redis: rdb, Dispatcher: dispatcher, Concurrency: cfg.FeedsConcurrency,
		Logger: log, Registerer: reg,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("feeds: %w", err)
	}
	return nil
}
