package ledger

import (
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// EnvRetention names the setting of Config.Retention.
const EnvRetention = "HERALD_MESSAGE_RETENTION"

// DefaultRetention is how long a settled message's record is kept.
const DefaultRetention = 7 * 24 * time.Hour

// minRetention is the shortest retention: a send record must outlive any
// redelivery of its task (worker.FinishedRecordTTL), and the ledger's
// record is that send record.
const minRetention = time.Hour

// Config configures the ledger. Both binaries read it: workers write the
// records of messages they settle, producers those of the messages they
// cancel or silence.
type Config struct {
	// Retention is how long a settled message's record is kept. Default
	// DefaultRetention; at least an hour.
	Retention time.Duration
}

// WithDefaults fills in the defaults.
func (c Config) WithDefaults() Config {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	return c
}

// Specs binds the settings.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvRetention, config.FmtDur(DefaultRetention),
			"How long GET /v1/messages/{id} knows a settled message (sent, failed, cancelled, ...); docs/STATUS.md has the Redis memory each costs.",
			config.DurationVar(&c.Retention)),
	}
}

// Check adds the configuration's problems to p.
func (c Config) Check(p *config.Problems) {
	if c.Retention < minRetention {
		p.Add(EnvRetention, "must be at least 1h: a message's record is also what keeps a redelivered task from sending it twice")
	}
}
