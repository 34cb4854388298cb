package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
)

// RunFeeds polls the feeds of path (HERALD_FEEDS_FILE when empty) until ctx
// ends, turning new items into alerts through the producer's routes. When
// cfg.Listen is set it serves /livez, /readyz and /metrics there. SIGHUP
// reloads the routing file; the feed list is read once at start.
func RunFeeds(ctx context.Context, cfg settings.Producer, path string, log *slog.Logger) error {
	fc := cfg.Feeds
	if path != "" {
		fc.Path = path
	}
	if fc.Path == "" {
		return fmt.Errorf("no feed list: pass --config feeds.yaml or set %s", feeds.EnvFile)
	}
	var err error
	if fc.File, err = feeds.LoadConfig(fc.Path); err != nil {
		return err
	}
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{})
	if err != nil {
		return err
	}
	defer rdb.Close()
	if err := checkRedisAuth(ctx, rdb, cfg.Redis.Redacted()); err != nil {
		return err
	}
	enq := NewEnqueuer(rdb, cfg)
	defer enq.Close()
	st, err := NewSilences(cfg, rdb, enq, log)
	if err != nil {
		return err
	}
	routed, router, err := NewRouter(cfg, rdb, enq, st, log)
	if err != nil {
		return err
	}
	if router == nil {
		return fmt.Errorf("feeds need routes: set %s or %s", alerts.EnvRoutesFile, alerts.EnvDefaultChat)
	}
	// The poller releases held messages too, for a fleet whose only
	// producer of alerts is a feed poller.
	if err := st.Start(ctx); err != nil {
		return err
	}
	defer st.Shutdown()
	// An item is recorded as seen only after its messages are confirmed
	// stored; otherwise the next poll sends it again.
	dispatcher := settledDispatcher{d: routed, enq: enq}
	reg := NewRegistry()
	if cfg.Server.Listen != "" {
		httpCtx, stop := context.WithCancel(ctx)
		defer stop()
		h := healthHandler(writableCheck(rdb, cfg.Redis.ReplicaHint()), promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		go func() {
			if err := httpapi.ListenAndServe(httpCtx, cfg.Server.Listen, h, log); err != nil {
				log.Error("feeds health/metrics server failed", "error", err)
			}
		}()
	}
	stopHUP := reloadOnHUP(ctx, log, cfg.Routes.File, func() error { return reloadRoutes(router, cfg.Routes.File) })
	defer stopHUP()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go durable.Watch(watchCtx, rdb, roleWatchInterval, cfg.Redis.ReplicaHint(), log)
	log.Info("feed poller starting", "feeds", len(fc.File.Feeds), "file", fc.Path, "concurrency", fc.Concurrency,
		"redis", cfg.Redis.Redacted())
	fc.Redis, fc.Dispatcher, fc.Logger, fc.Registerer = rdb, dispatcher, log, reg
	err = feeds.Run(ctx, fc)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("feeds: %w", err)
	}
	return nil
}

// settledDispatcher confirms, through the Enqueuer's Settle, that the
// messages of each dispatched batch reached the replicas the settings ask
// for; a batch that was not confirmed is reported as failed.
type settledDispatcher struct {
	d   alerts.Dispatcher
	enq *jobs.Enqueuer
}

func (s settledDispatcher) Dispatch(ctx context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	ctx = durable.Track(ctx)
	res, err := s.d.Dispatch(ctx, batch)
	if err != nil {
		return res, err
	}
	if err := s.enq.Settle(ctx, keys.HeartbeatRecords()); err != nil {
		return alerts.Dispatched{}, err
	}
	return res, nil
}
