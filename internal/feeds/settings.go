package feeds

import (
	"strconv"

	"github.com/herald-dev/herald/internal/config"
)

// The feed poller's settings (`producer feeds`).
const (
	EnvFile        = "HERALD_FEEDS_FILE"
	EnvConcurrency = "HERALD_FEEDS_CONCURRENCY"
)

// Specs binds the feed poller's settings to c, in documentation order.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvFile, "", "Feed list polled by `producer feeds`.", config.StringVar(&c.Path)),
		config.NewSpec(EnvConcurrency, strconv.Itoa(DefaultConcurrency), "Feed fetches at once in `producer feeds`.", config.IntVar(&c.Concurrency)),
	}
}

// Check reports every problem of the feed poller's settings by their names.
func (c Config) Check(p *config.Problems) {
	if c.Concurrency < 1 {
		p.Add(EnvConcurrency, "must be >= 1, got %d", c.Concurrency)
	}
}
