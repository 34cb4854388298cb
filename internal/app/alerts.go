package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/silences"
)

// LoadRoutes returns the routing table the producer's settings name: the
// routing file when HERALD_ROUTES_FILE is set, else one default route to
// HERALD_ALERTS_DEFAULT_CHAT, else nil (alerts answer 422 no_route). The
// routes may name only the bots of HERALD_BOTS.
func LoadRoutes(cfg settings.Producer) (*alerts.Table, error) {
	opts := alerts.ParseOptions{Bots: cfg.BotNames()}
	switch {
	case cfg.RoutesFile != "":
		t, err := alerts.LoadRoutesWith(cfg.RoutesFile, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", settings.EnvRoutesFile, err)
		}
		return t, nil
	case cfg.AlertsDefaultChat != "":
		chat, err := jobs.ValidateChat(cfg.AlertsDefaultChat)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", settings.EnvAlertsDefaultChat, err)
		}
		doc := "routes:\n  - name: default\n    default: true\n    destinations:\n      - chat: " + strconv.Quote(chat) + "\n"
		return alerts.ParseRoutesWith(settings.EnvAlertsDefaultChat, []byte(doc), opts)
	}
	return nil, nil
}

// NewSilences builds the store of silences and quiet hours on rdb; the
// router consults it and the producer serves its API and runs its
// releaser. Held messages are released through enq with the producer's
// retry budget and idempotency window.
func NewSilences(cfg settings.Producer, rdb redis.UniversalClient, enq *jobs.Enqueuer, log *slog.Logger) (*silences.Store, error) {
	return silences.New(silences.Config{
		Redis: rdb, Items: enq, Logger: log,
		IdempotencyWindow: cfg.IdempotencyWindow, MaxRetry: cfg.MaxRetry, MaxBodyBytes: cfg.MaxBodyBytes,
	})
}

// NewRouter builds the alert router over enq. With st, every alert is
// checked against the silences and routes' quiet hours hold messages there.
// rdb (the enqueuer's Redis) holds the alerts' threads and what their
// buttons act on. Without a routing table every dispatch fails with
// alerts.ErrNoRoute and a hint at the settings.
func NewRouter(cfg settings.Producer, rdb redis.UniversalClient, enq *jobs.Enqueuer, st *silences.Store, log *slog.Logger) (alerts.Dispatcher, *alerts.Router, error) {
	table, err := LoadRoutes(cfg)
	if err != nil {
		return nil, nil, err
	}
	if table == nil {
		return unrouted{}, nil, nil
	}
	rcfg := alerts.RouterConfig{Logger: log, MaxTextLen: cfg.MaxTextLen, Bots: cfg.BotNames()}
	if rdb != nil {
		rcfg.Redis = rdb
	}
	if st != nil {
		rcfg.Silences, rcfg.Holder = st, st
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
	return alerts.Dispatched{}, fmt.Errorf("%w: set %s or %s", alerts.ErrNoRoute, settings.EnvRoutesFile, settings.EnvAlertsDefaultChat)
}
