package escalation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/jobs"
)

// Defaults of Config.
const (
	// DefaultCheckInterval is how often an engine looks for due steps and
	// for the delivery of the messages it sent.
	DefaultCheckInterval = time.Second
	// DefaultLease is how long a claimed escalation is the claimant's:
	// one that dies mid-step is taken over after it
	// (HERALD_ESCALATION_LEASE).
	DefaultLease = 30 * time.Second
	// defaultBatch is the most escalations one claim takes.
	defaultBatch = 100
)

// enqueuer is the part of *jobs.Enqueuer the engine sends through: every
// notification is an ordinary message, under the fleet's limits and
// retries.
type enqueuer interface {
	Enqueue(ctx context.Context, req jobs.Request) (jobs.Result, error)
}

// Outcome is what became of a message, as far as is known.
type Outcome struct {
	// Settled is set once the message was sent or failed for good.
	Settled bool
	// Failed is set when it failed for good; Reason says why (the worker's
	// reason: blocked, forbidden, chat_not_found, ...).
	Failed bool
	Reason string
}

// Deliveries tells what became of a message the engine sent, by its bot
// and task id: the worker's ledger. Without it a step waits its whole
// wait whatever became of its messages.
type Deliveries interface {
	Outcome(ctx context.Context, bot, taskID string) (Outcome, error)
}

// Silencer says whether a silence in force catches an escalation's alert:
// the id of the silence, or "". Package silences implements it (through
// an adapter that makes the alert).
type Silencer interface {
	Silenced(ctx context.Context, s Subject) (string, error)
}

// Config configures an Engine.
type Config struct {
	// Redis holds the escalations. Required.
	Redis redis.UniversalClient
	// Messages enqueues the notifications. Required.
	Messages enqueuer
	// Catalog returns the policies in force (the routing file's, swapped
	// on reload). Required.
	Catalog func() Catalog
	// Roster says who is on call in a schedule, for on_call targets; nil:
	// nobody is.
	Roster Roster
	// Deliveries, when set, lets a step whose every message failed move
	// on at once (and show why in the thread).
	Deliveries Deliveries
	// Silences, when set, stops the escalation of an alert a silence
	// catches.
	Silences Silencer
	// CheckInterval is how often the engine looks (default
	// DefaultCheckInterval, ±20%).
	CheckInterval time.Duration
	// DMWindow is how long after a policy's last step DM to a person its
	// next one still queues behind it rather than ahead of the person's
	// waiting messages (default DMFloodWindow; see take.sendDM).
	DMWindow time.Duration
	// Lease and BatchSize tune the claims (defaults 30s and 100).
	Lease     time.Duration
	BatchSize int
	Logger    *slog.Logger
	Metrics   *Metrics
	// clock replaces Redis's TIME in the scripts (tests): unix µs.
	clock func() int64
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.CheckInterval <= 0 {
		c.CheckInterval = DefaultCheckInterval
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.DMWindow <= 0 {
		c.DMWindow = DMFloodWindow
	}
	if c.BatchSize <= 0 {
		c.BatchSize = defaultBatch
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Metrics = c.Metrics.orNew()
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Redis == nil {
		errs = append(errs, errors.New("escalation: Config.Redis is required"))
	}
	if c.Messages == nil {
		errs = append(errs, errors.New("escalation: Config.Messages is required: the notifications are queued like any message"))
	}
	if c.Catalog == nil {
		errs = append(errs, errors.New("escalation: Config.Catalog is required: the policies in force"))
	}
	return errors.Join(errs...)
}

// Engine takes the escalations' steps: every CheckInterval it claims the
// escalations that are due (each is one producer's until its lease runs
// out), sends their step's notifications and moves them on, each move a
// script that only the claimant can make once. Run one in every producer:
// however many run, each step is taken once, and a producer that dies
// mid-step is replaced when its lease runs out; the notifications' own
// idempotency keys keep a step taken again from sending twice.
type Engine struct {
	cfg   Config
	store *Store

	loops background.Group
}

// NewEngine validates cfg and returns an engine; Start runs it.
func NewEngine(cfg Config) (*Engine, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st := NewStore(cfg.Redis, cfg.Metrics)
	st.clock = cfg.clock
	return &Engine{cfg: cfg, store: st}, nil
}

// Start runs the engine in the background until Shutdown or the end of
// ctx: a check every CheckInterval (± 20%), the first after one interval.
func (e *Engine) Start(ctx context.Context) error {
	if err := e.loops.Start(ctx, e.loop); err != nil {
		return fmt.Errorf("escalation: engine %w", err)
	}
	return nil
}

// Shutdown stops the engine and waits for a check under way. Escalations
// it had claimed are taken over when their leases run out.
func (e *Engine) Shutdown() { e.loops.Shutdown() }

func (e *Engine) loop(ctx context.Context) {
	background.Every(ctx, e.cfg.CheckInterval, e.cfg.CheckInterval, func() {
		if _, err := e.Check(context.WithoutCancel(ctx)); err != nil {
			e.cfg.Logger.Warn("escalation check failed; retrying at the next check", "error", err)
		}
	})
}

// Check takes the steps that are due now: it claims them, takes each and
// returns how many it moved on. A failure leaves an escalation to be taken
// over when its lease runs out.
func (e *Engine) Check(ctx context.Context) (int, error) {
	now, lease, ids, err := e.store.claim(ctx, e.cfg.Lease, e.cfg.BatchSize)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	recs, err := e.store.load(ctx, ids)
	if err != nil {
		return 0, err
	}
	cat := e.cfg.Catalog()
	moved := 0
	var errs []error
	for _, id := range ids {
		r, ok := recs[id]
		if !ok {
			// Resolved and forgotten while due.
			errs = append(errs, e.store.drop(ctx, id))
			continue
		}
		t := &take{e: e, r: r, cat: cat, now: now, lease: lease,
			log: e.cfg.Logger.With("escalation", id, "policy", r.Policy, "route", r.Route, "alert", r.Alert.Title)}
		ok, err := t.run(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			moved++
		}
	}
	return moved, errors.Join(errs...)
}
