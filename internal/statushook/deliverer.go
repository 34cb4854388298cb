package statushook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/keys"
)

// DelivererConfig configures the callback delivery of one worker process.
type DelivererConfig struct {
	// Client is the deliverer's own Redis client, required: its asynq
	// server installs the broker's hooks on it (the held dequeue rounds
	// among them), which must not see the Telegram server's commands. Run
	// closes it.
	Client redis.UniversalClient
	// Callbacks are the settings; the master key is required.
	Callbacks Config
	// ShutdownTimeout bounds how long attempts under way may finish after
	// Run's context ends (the worker's HERALD_SHUTDOWN_TIMEOUT; default
	// the broker's).
	ShutdownTimeout time.Duration
	// MaxIdle and LeaseRecoveryAfter are the broker's (the worker's
	// HERALD_MAX_IDLE and HERALD_LEASE_RECOVERY_AFTER; default the
	// broker's).
	MaxIdle, LeaseRecoveryAfter time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the callback metrics; nil means none.
	Registerer prometheus.Registerer
}

// Deliverer is the callbacks' side of a worker process: an asynq server of
// its own (its own goroutines, HERALD_CALLBACK_CONCURRENCY of them, and its
// own wake list, keys.HookWakeList) that serves the callbacks' queue
// alone, so that callbacks and Telegram sends never wait for each other.
// Each task is one attempt at one event: signed with its endpoint's
// secret, posted with the guarded client (poster), and then done, retried after
// the Schedule's next wait, or archived with the reason, as the answer and
// the endpoint's health say (docs/STATUS.md).
type Deliverer struct {
	rdb    redis.UniversalClient
	srv    *broker.Server
	handle *attempts
	log    *slog.Logger

	loops background.Group
}

// NewDeliverer builds a Deliverer; Run (or Start) serves.
func NewDeliverer(cfg DelivererConfig) (*Deliverer, error) {
	c := cfg.Callbacks.WithDefaults()
	master, err := c.master()
	switch {
	case err != nil:
		return nil, err
	case master == nil:
		return nil, errNoMaster
	case cfg.Client == nil:
		return nil, errors.New("statushook: DelivererConfig.Client is required")
	}
	policy, err := c.policy()
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	srv, err := broker.NewServer(cfg.Client, broker.ServerConfig{
		Queues: map[string]int{Queue: 1}, Concurrency: c.Concurrency, ShutdownTimeout: cfg.ShutdownTimeout,
		MaxIdle: cfg.MaxIdle, LeaseRecoveryAfter: cfg.LeaseRecoveryAfter, WakeList: keys.HookWakeList(),
		Logger: cfg.Logger.With("component", "callbacks"),
	})
	if err != nil {
		return nil, fmt.Errorf("statushook: %w", err)
	}
	h := &attempts{
		health: health{rdb: cfg.Client}, client: newPoster(posterOptions{Policy: policy, Timeout: c.Timeout}),
		policy: policy, master: master, schedule: c.Schedule, disableAfter: c.DisableAfter,
		runTTL:  c.DisableAfter + slices.Max(c.Schedule) + c.Timeout + time.Minute,
		metrics: newMetrics(cfg.Registerer), log: cfg.Logger, now: time.Now,
		shares: newShares(c.Concurrency, time.Now),
	}
	return &Deliverer{rdb: cfg.Client, srv: srv, handle: h, log: cfg.Logger}, nil
}

// Run serves the callbacks' queue until ctx ends, then stops taking
// events, lets the attempts under way finish within ShutdownTimeout, and
// closes its Redis client. Events waiting for their next attempt stay in
// Redis for the fleet.
func (d *Deliverer) Run(ctx context.Context) error {
	err := d.srv.Run(ctx, map[string]broker.Handler{TaskType: d.handle}, nil)
	d.handle.client.CloseIdleConnections()
	if cerr := d.rdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("statushook: %w", err)
	}
	return nil
}

// Start runs the Deliverer in the background until ctx ends or Shutdown
// is called (worker.Component).
func (d *Deliverer) Start(ctx context.Context) error {
	err := d.loops.Start(ctx, func(ctx context.Context) {
		if err := d.Run(ctx); err != nil {
			d.log.Warn("callback deliverer stopped with an error", "error", err)
		}
	})
	if err != nil {
		return fmt.Errorf("statushook: Deliverer %w", err)
	}
	return nil
}

// Shutdown stops a Deliverer that Start started and waits for Run to
// return.
func (d *Deliverer) Shutdown() { d.loops.Shutdown() }

// Ready reports whether the Deliverer takes events.
func (d *Deliverer) Ready() bool { return d.srv.Ready() }
