package silences

import (
	"context"
	"errors"
	"time"
)

// Start runs the store's background work until Shutdown is called or ctx
// ends: every Config.ReleaseInterval it releases the held messages whose
// quiet hours are over, and every Config.CollectInterval it removes the
// silences expired for longer than the retention. Run it in every producer
// process; the scripts make sure each held message is released by one of
// them. It returns an error if the store was already started.
func (s *Store) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("silences: store already started")
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx)
	return nil
}

// Shutdown stops the loop and waits for a pass in progress to finish. It
// may be called more than once, and before Start.
func (s *Store) Shutdown() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *Store) loop(ctx context.Context) {
	defer close(s.done)
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
