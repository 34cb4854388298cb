package escalation

import (
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// The producer's settings of escalations (on-call's are
// internal/oncall/roster's).
const (
	EnvCheckInterval = "HERALD_ESCALATION_CHECK_INTERVAL"
	EnvLease         = "HERALD_ESCALATION_LEASE"
)

// Bounds of the intervals.
const (
	minInterval = 100 * time.Millisecond
	maxInterval = 10 * time.Minute
)

// Settings are how often each producer takes escalation steps, and how
// long it holds one.
type Settings struct {
	// CheckInterval is the engine's (default DefaultCheckInterval): a step
	// comes within about this long of its time, and a step whose messages
	// all failed moves on within about this long of the failure.
	CheckInterval time.Duration
	// Lease is how long a producer that claimed a due step holds it
	// (default DefaultLease): a producer that dies mid-step has its step
	// taken over by another once the lease runs out, so a step comes at
	// most about this late after a producer kill. The same trade as the
	// worker's lease recovery: shorter takes over sooner, but a producer
	// paused longer than the lease (a GC pause, a Redis failover) loses
	// its step to another, which then takes it again; the step's messages
	// are enqueued under idempotency keys, so they are not sent twice.
	Lease time.Duration
}

// WithDefaults fills the zero settings.
func (s Settings) WithDefaults() Settings {
	if s.CheckInterval == 0 {
		s.CheckInterval = DefaultCheckInterval
	}
	if s.Lease == 0 {
		s.Lease = DefaultLease
	}
	return s
}

// Specs binds the settings to s, in documentation order.
func (s *Settings) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvCheckInterval, config.FmtDur(DefaultCheckInterval),
			"How often each producer takes the escalation steps that are due and looks at the delivery of their messages.",
			config.DurationVar(&s.CheckInterval)),
		config.NewSpec(EnvLease, config.FmtDur(DefaultLease),
			"How long a producer holds an escalation step it took: a producer that dies mid-step has the step taken over by another after this. Between 5s and 10m, and at least three check intervals.",
			config.DurationVar(&s.Lease)),
	}
}

// Check reports every problem of the settings by their names.
func (s Settings) Check(p *config.Problems) {
	if s.CheckInterval < minInterval || s.CheckInterval > maxInterval {
		p.Add(EnvCheckInterval, "must be between %s and %s (e.g. %s), got %s",
			config.FmtDur(minInterval), config.FmtDur(maxInterval), config.FmtDur(DefaultCheckInterval), config.FmtDur(s.CheckInterval))
	}
	if s.Lease < minLease || s.Lease > maxInterval || s.Lease < 3*s.CheckInterval {
		p.Add(EnvLease, "must be between %s and %s and at least three times %s (%s), so that a live producer renews nothing it could lose between two looks; got %s",
			config.FmtDur(minLease), config.FmtDur(maxInterval), EnvCheckInterval, config.FmtDur(s.CheckInterval), config.FmtDur(s.Lease))
	}
}

// minLease is the shortest escalation lease: a step's work (a few
// enqueues and one script) must fit well inside it.
const minLease = 5 * time.Second
