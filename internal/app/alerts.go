package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
)

// LoadRoutes returns the routing table the producer's settings name: the
// routing file when HERALD_ROUTES_FILE is set, else one default route to
// HERALD_ALERTS_DEFAULT_CHAT, else nil (alerts answer 422 no_route). The
// routes may name only the bots of HERALD_BOTS.
func LoadRoutes(cfg config.Producer) (*alerts.Table, error) {
	opts := alerts.ParseOptions{Bots: cfg.BotNames()}
	switch {
	case cfg.RoutesFile != "":
		t, err := alerts.LoadRoutesWith(cfg.RoutesFile, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.EnvRoutesFile, err)
		}
		return t, nil
	case cfg.AlertsDefaultChat != "":
		chat, err := jobs.ValidateChat(cfg.AlertsDefaultChat)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", config.EnvAlertsDefaultChat, err)
		}
		doc := "routes:\n  - name: default\n    default: true\n    destinations:\n      - chat: " + strconv.Quote(chat) + "\n"
		return alerts.ParseRoutesWith(config.EnvAlertsDefaultChat, []byte(doc), opts)
	}
	return nil, nil
}

// NewRouter builds the alert router over enq. Without a routing table every
// dispatch fails with alerts.ErrNoRoute and a hint at the settings.
func NewRouter(cfg config.Producer, enq *jobs.Enqueuer, log *slog.Logger) (alerts.Dispatcher, *alerts.Router, error) {
	table, err := LoadRoutes(cfg)
	if err != nil {
		return nil, nil, err
	}
	if table == nil {
		return unrouted{}, nil, nil
	}
	r, err := alerts.NewRouter(table, enq, alerts.RouterConfig{Logger: log, MaxTextLen: cfg.MaxTextLen, Bots: cfg.BotNames()})
	if err != nil {
		return nil, nil, err
	}
	return r, r, nil
}

// unrouted is the dispatcher of a producer with no routing configured.
type unrouted struct{}

func (unrouted) Dispatch(context.Context, []alerts.Alert) (alerts.Dispatched, error) {
	return alerts.Dispatched{}, fmt.Errorf("%w: set %s or %s", alerts.ErrNoRoute, config.EnvRoutesFile, config.EnvAlertsDefaultChat)
}
