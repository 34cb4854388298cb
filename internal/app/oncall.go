package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/silences"
)

// onCall is the producer's side of on-call and escalations: the
// escalation engine, and the roster's service (the handoff announcer and
// the on-call API), over the routing file's policies and schedules
// (reloaded with it). Without a routing file there is none of it.
type onCall struct {
	engine *escalation.Engine
	roster *roster.Service
	mounts []httpapi.Mount
}

// newOnCall builds the on-call side on the router's table. Every
// notification goes through enq, as any message.
func newOnCall(cfg settings.Producer, rdb redis.UniversalClient, enq *jobs.Enqueuer, router *alerts.Router, st *silences.Store,
	reg prometheus.Registerer, log *slog.Logger) (*onCall, error) {
	if router == nil || rdb == nil {
		return &onCall{}, nil
	}
	svc, err := roster.New(roster.Config{Redis: rdb, Messages: enq, Catalog: func() roster.Catalog { return router.Table().Schedules() },
		Settings: cfg.OnCall, MaxBodyBytes: cfg.Server.MaxBodyBytes, Logger: log})
	if err != nil {
		return nil, err
	}
	ecfg := escalation.Config{Redis: rdb, Messages: enq, Catalog: func() escalation.Catalog { return router.Table().Catalog() }, Roster: svc.Roster(),
		Deliveries: deliveries{ledger.NewStore(rdb, cfg.Ledger)}, CheckInterval: cfg.Escalation.CheckInterval, Lease: cfg.Escalation.Lease, Logger: log.With("component", "escalation"),
		Metrics: escalation.NewMetrics(reg)}
	if st != nil {
		ecfg.Silences = silenceCheck{st}
	}
	engine, err := escalation.NewEngine(ecfg)
	if err != nil {
		return nil, err
	}
	return &onCall{engine: engine, roster: svc, mounts: svc.Mounts()}, nil
}

// Start runs the engine and the announcer.
func (o *onCall) Start(ctx context.Context) error {
	if o.engine == nil {
		return nil
	}
	if err := o.engine.Start(ctx); err != nil {
		return err
	}
	return o.roster.Start(ctx)
}

// Shutdown stops them, waiting for a pass under way.
func (o *onCall) Shutdown() {
	if o.engine == nil {
		return
	}
	o.engine.Shutdown()
	o.roster.Shutdown()
}

// silenceCheck asks the silences store about an escalation's alert.
type silenceCheck struct{ st *silences.Store }

func (s silenceCheck) Silenced(ctx context.Context, sub escalation.Subject) (string, error) {
	a := alerts.Alert{Title: sub.Title, Severity: alerts.Severity(sub.Severity), Source: sub.Source, Labels: sub.Labels, URL: sub.URL}
	return s.st.Silenced(ctx, &a, time.Now())
}
