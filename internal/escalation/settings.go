package escalation

import (
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// The producer's settings of escalations and on-call.
const (
	EnvCheckInterval    = "HERALD_ESCALATION_CHECK_INTERVAL"
	EnvAnnounceInterval = "HERALD_ONCALL_ANNOUNCE_INTERVAL"
)

// Bounds of the intervals.
const (
	minInterval = 100 * time.Millisecond
	maxInterval = 10 * time.Minute
)

// Settings are how often each producer takes escalation steps and looks
// for handoffs to announce.
type Settings struct {
	// CheckInterval is the engine's (default DefaultCheckInterval): a step
	// comes within about this long of its time, and a step whose messages
	// all failed moves on within about this long of the failure.
	CheckInterval time.Duration
	// AnnounceInterval is the announcer's (default
	// DefaultAnnounceInterval).
	AnnounceInterval time.Duration
}

// WithDefaults fills the zero settings.
func (s Settings) WithDefaults() Settings {
	if s.CheckInterval == 0 {
		s.CheckInterval = DefaultCheckInterval
	}
	if s.AnnounceInterval == 0 {
		s.AnnounceInterval = DefaultAnnounceInterval
	}
	return s
}

// Specs binds the settings to s, in documentation order.
func (s *Settings) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvCheckInterval, config.FmtDur(DefaultCheckInterval),
			"How often each producer takes the escalation steps that are due and looks at the delivery of their messages.",
			config.DurationVar(&s.CheckInterval)),
		config.NewSpec(EnvAnnounceInterval, config.FmtDur(DefaultAnnounceInterval),
			"How often each producer looks for on-call handoffs to announce in their schedules' chats.",
			config.DurationVar(&s.AnnounceInterval)),
	}
}

// Check reports every problem of the settings by their names.
func (s Settings) Check(p *config.Problems) {
	for _, c := range []struct {
		env string
		d   time.Duration
		def time.Duration
	}{{EnvCheckInterval, s.CheckInterval, DefaultCheckInterval}, {EnvAnnounceInterval, s.AnnounceInterval, DefaultAnnounceInterval}} {
		if c.d < minInterval || c.d > maxInterval {
			p.Add(c.env, "must be between %s and %s (e.g. %s), got %s",
				config.FmtDur(minInterval), config.FmtDur(maxInterval), config.FmtDur(c.def), config.FmtDur(c.d))
		}
	}
}
