package heartbeat

import (
	"context"
	"fmt"

	"github.com/herald-dev/herald/internal/background"
)

// Checker looks for overdue heartbeats every CheckInterval and dispatches
// the alerts. Run one in every producer process: the scripts make sure each
// outage raises one alert whatever the number of checkers. It is a goroutine
// of its own rather than a queued task, so a backlog on the send path never
// delays a check.
type Checker struct {
	cfg Config
	st  *store
	dl  *deliverer

	loops background.Group

	// afterCheck, when set (by tests), is called after every check of the
	// loop with its outcome.
	afterCheck func(checkResult)
}

// checkResult is the outcome of one check.
type checkResult struct {
	// Overdue is how many heartbeats this check turned down.
	Overdue int
	// Dispatched is how many alerts (overdue and recovery) it dispatched.
	Dispatched int
	// Err is the first failure: Redis unreachable or a dispatch refused.
	Err error
}

// NewChecker validates cfg and returns a checker; call Start to run it.
func NewChecker(cfg Config) (*Checker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st := &store{rdb: cfg.Redis, cfg: cfg}
	return &Checker{
		cfg: cfg,
		st:  st,
		dl:  &deliverer{st: st, d: cfg.Dispatcher, timeout: cfg.DispatchTimeout, log: cfg.Logger},
	}, nil
}

// Start runs the check loop in the background until Shutdown is called or
// ctx ends: a check every CheckInterval ± 20%, so replicas started
// together drift apart instead of racing for the same work on every tick.
// It returns an error if the checker was already started.
func (c *Checker) Start(ctx context.Context) error {
	if err := c.loops.Start(ctx, c.loop); err != nil {
		return fmt.Errorf("heartbeat: checker %w", err)
	}
	c.cfg.Logger.Debug("heartbeat checker started", "check_interval", c.cfg.CheckInterval)
	return nil
}

// Shutdown stops the loop and waits for a check in progress to finish (its
// dispatches are bounded by DispatchTimeout). A notification it had claimed
// but not dispatched is taken over by another replica when its lease runs
// out. Shutdown may be called more than once, and before Start.
func (c *Checker) Shutdown() { c.loops.Shutdown() }

func (c *Checker) loop(ctx context.Context) {
	d := c.cfg.CheckInterval
	background.Every(ctx, background.Jitter(d), d, func() {
		// A check that has begun finishes even when shutdown is asked
		// meanwhile, so it does not leave claimed notifications behind.
		res := c.Check(context.WithoutCancel(ctx))
		if c.afterCheck != nil {
			c.afterCheck(res)
		}
	})
}

// Check runs one check now: it turns the overdue heartbeats down (each
// exactly once across all replicas), claims the notifications that are due
// (new ones, ones a failed dispatch gave back, ones whose claimant died) and
// dispatches them. Start calls it every CheckInterval.
func (c *Checker) Check(ctx context.Context) checkResult {
	var res checkResult
	for {
		overdue, claimed, err := c.st.check(ctx)
		if err != nil {
			c.cfg.Logger.Warn("heartbeat check failed; retrying at the next check", "error", err)
			if res.Err == nil {
				res.Err = err
			}
			return res
		}
		res.Overdue += overdue
		if overdue > 0 {
			c.cfg.Logger.Info("heartbeats overdue", "count", overdue)
		}
		sent, err := c.dl.deliver(ctx, claimed)
		res.Dispatched += sent
		if err != nil && res.Err == nil {
			res.Err = err
		}
		// A full batch may have left more behind; an error waits for the
		// next check.
		if err != nil || (overdue < c.cfg.BatchSize && len(claimed) < c.cfg.BatchSize) || ctx.Err() != nil {
			return res
		}
	}
}
