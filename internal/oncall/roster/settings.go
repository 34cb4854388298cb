package roster

import (
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// EnvAnnounceInterval is the producer's setting of on-call: how often it
// looks for handoffs to announce.
const EnvAnnounceInterval = "HERALD_ONCALL_ANNOUNCE_INTERVAL"

// Bounds of the interval.
const (
	minInterval = 100 * time.Millisecond
	maxInterval = 10 * time.Minute
)

// Settings are how often each producer looks for handoffs to announce.
type Settings struct {
	// AnnounceInterval is the announcer's (default
	// DefaultAnnounceInterval).
	AnnounceInterval time.Duration
}

// WithDefaults fills the zero settings.
func (s Settings) WithDefaults() Settings {
	if s.AnnounceInterval == 0 {
		s.AnnounceInterval = DefaultAnnounceInterval
	}
	return s
}

// Specs binds the settings to s, in documentation order.
func (s *Settings) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvAnnounceInterval, config.FmtDur(DefaultAnnounceInterval),
			"How often each producer looks for on-call handoffs to announce in their schedules' chats.",
			config.DurationVar(&s.AnnounceInterval)),
	}
}

// Check reports every problem of the settings by their names.
func (s Settings) Check(p *config.Problems) {
	if s.AnnounceInterval < minInterval || s.AnnounceInterval > maxInterval {
		p.Add(EnvAnnounceInterval, "must be between %s and %s (e.g. %s), got %s",
			config.FmtDur(minInterval), config.FmtDur(maxInterval), config.FmtDur(DefaultAnnounceInterval), config.FmtDur(s.AnnounceInterval))
	}
}
