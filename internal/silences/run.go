package silences

import (
	"context"
	"fmt"
	"time"
)

// Start runs the store's background work until Shutdown is called or ctx
// ends: every Config.ReleaseInterval it releases the held messages whose
// quiet hours are over (asking Redis only when one is due by what this
// process knows, or every releaseBackstop intervals for messages other
// producers held), and every Config.CollectInterval it removes the
// silences expired for longer than the retention. Run it in every producer
// process; the scripts make sure each held message is released by one of
// them. It returns an error if the store was already started.
func (s *Store) Start(ctx context.Context) error {
	if err := s.loops.Start(ctx, s.loop); err != nil {
		return fmt.Errorf("silences: store %w", err)
	}
	return nil
}

// Shutdown stops the loop and waits for a pass in progress to finish. It
// may be called more than once, and before Start.
func (s *Store) Shutdown() { s.loops.Shutdown() }

func (s *Store) loop(ctx context.Context) {
	release := time.NewTicker(s.cfg.ReleaseInterval)
	defer release.Stop()
	collect := time.NewTicker(s.cfg.CollectInterval)
	defer collect.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-release.C:
			if !s.releaseDue() {
				continue
			}
			n, err := s.Release(ctx)
			switch {
			case err != nil && ctx.Err() == nil && !failing:
				s.cfg.Logger.Warn("releasing held messages failed; retrying", "error", err)
				failing = true
			case err == nil:
				failing = false
			}
			if n > 0 {
				s.cfg.Logger.Info("quiet hours over: held messages released into their digests", "messages", n)
			}
		case <-collect.C:
			n, err := s.Collect(ctx)
			if err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("removing old silences failed; retrying at the next pass", "error", err)
			}
			if n > 0 {
				s.cfg.Logger.Info("expired silences removed after their retention", "silences", n, "retention", s.cfg.Retention)
			}
		}
	}
}

// releaseBackstop is how many release intervals may pass without a look
// in Redis while no held message is known to be due: a message held by
// another producer is released within that many intervals of its time
// even if that producer is gone (its own releaser is on time).
const releaseBackstop = 30

// releaseDue tells the loop whether to look for held messages now: when
// the next due time this process knows of has come, when it knows none
// (at start, after an error), or after releaseBackstop intervals.
func (s *Store) releaseDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idleTicks++
	if !s.dueKnown || s.idleTicks >= releaseBackstop || (!s.nextDue.IsZero() && !s.cfg.Now().Before(s.nextDue)) {
		s.idleTicks = 0
		return true
	}
	return false
}

// noteDue records when a held message is due: at, as the release script
// reported it (replace: zero when none is held), or a message this
// process just held (the earlier of it and what was known).
func (s *Store) noteDue(at time.Time, replace bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case replace:
		s.nextDue, s.dueKnown = at, true
	case s.nextDue.IsZero() || at.Before(s.nextDue):
		s.nextDue = at
	}
}

// forgetDue makes the loop look at every interval again (after an error).
func (s *Store) forgetDue() {
	s.mu.Lock()
	s.dueKnown = false
	s.mu.Unlock()
}
