package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/silences"
)

// LoadRoutes returns the routing table the producer's settings name
// (alerts.RoutesConfig.Load); the routes may name only the bots of
// HERALD_BOTS.
func LoadRoutes(cfg settings.Producer) (*alerts.Table, error) {
	return cfg.Routes.Load(alerts.ParseOptions{Bots: cfg.BotNames()})
}

// NewSilences builds the store of silences and quiet hours on rdb; the
// router consults it and the producer serves its API and runs its
// releaser. Held messages are released through enq with the producer's
// retry budget and idempotency window.
func NewSilences(cfg settings.Producer, rdb redis.UniversalClient, enq *jobs.Enqueuer, log *slog.Logger) (*silences.Store, error) {
	return silences.New(silences.Config{
		Redis: rdb, Items: enq, Logger: log,
		IdempotencyWindow: cfg.Enqueue.IdempotencyWindow, MaxRetry: cfg.Enqueue.MaxRetry, MaxBodyBytes: cfg.Server.MaxBodyBytes,
	})
}

// NewRouter builds the alert router over enq. With st, every alert is
// checked against the silences and routes' quiet hours hold messages there.
// rdb (the enqueuer's Redis) holds the alerts' threads, what their
// buttons act on and their escalations. Without a routing table every dispatch fails with
// alerts.ErrNoRoute and a hint at the settings.
func NewRouter(cfg settings.Producer, rdb redis.UniversalClient, enq *jobs.Enqueuer, st *silences.Store, log *slog.Logger) (alerts.Dispatcher, *alerts.Router, error) {
	table, err := LoadRoutes(cfg)
	if err != nil {
		return nil, nil, err
	}
	if table == nil {
		return unrouted{}, nil, nil
	}
	rcfg := alerts.RouterConfig{Logger: log, MaxTextLen: cfg.Enqueue.Limits.MaxTextLen, Bots: cfg.BotNames()}
	if rdb != nil {
		rcfg.Redis = rdb
		rcfg.Escalations = escalation.NewStore(rdb, nil)
	}
	if st != nil {
		rcfg.Silences, rcfg.Holder = st, st
	}
	if rdb != nil {
		rcfg.Ledger = ledger.NewStore(rdb, cfg.Ledger)
	}
	r, err := alerts.NewRouter(table, enq, rcfg)
	if err != nil {
		return nil, nil, err
	}
	return r, r, nil
}

// unrouted is the dispatcher of a producer with no routing configured.
type unrouted struct{}

func (unrouted) Dispatch(context.Context, []alerts.Alert) (alerts.Dispatched, error) {
	return alerts.Dispatched{}, fmt.Errorf("%w: set %s or %s", alerts.ErrNoRoute, alerts.EnvRoutesFile, alerts.EnvDefaultChat)
}
