package heartbeat

import (
	"strconv"

	"github.com/herald-dev/herald/internal/config"
)

// The heartbeat settings of the producer.
const (
	EnvCheckInterval = "HERALD_HEARTBEAT_CHECK_INTERVAL"
	EnvMaxHeartbeats = "HERALD_MAX_HEARTBEATS"
)

// Specs binds the heartbeat settings to c, in documentation order.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvCheckInterval, config.FmtDur(DefaultCheckInterval), "How often each producer looks for overdue heartbeats.",
			config.DurationVar(&c.CheckInterval)),
		config.NewSpec(EnvMaxHeartbeats, strconv.Itoa(DefaultMaxHeartbeats), "Most heartbeats; a ping that would create one more is refused (409).",
			config.IntVar(&c.MaxHeartbeats)),
	}
}

// Check reports every problem of the heartbeat settings by their names.
func (c Config) Check(p *config.Problems) {
	if c.CheckInterval < minCheckInterval {
		p.Add(EnvCheckInterval, "must be at least %s (e.g. %s), got %s",
			config.FmtDur(minCheckInterval), config.FmtDur(DefaultCheckInterval), config.FmtDur(c.CheckInterval))
	}
	if c.MaxHeartbeats < 1 {
		p.Add(EnvMaxHeartbeats, "must be >= 1 (e.g. %d), got %d", DefaultMaxHeartbeats, c.MaxHeartbeats)
	}
}
