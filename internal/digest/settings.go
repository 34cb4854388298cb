package digest

import (
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/config"
)

// The digest settings, read by every worker.
const (
	envGracePeriod  = "HERALD_DIGEST_GRACE_PERIOD"
	envMaxDelay     = "HERALD_DIGEST_MAX_DELAY"
	envMaxSize      = "HERALD_DIGEST_MAX_SIZE"
	envMaxMessages  = "HERALD_DIGEST_MAX_MESSAGES"
	envReclaimAfter = "HERALD_DIGEST_RECLAIM_AFTER"
)

// Specs binds the digest settings to c's fields, in documentation order.
// ClaimTTL and MessageLimit are not settings.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(envGracePeriod, config.FmtDur(defaultGracePeriod), "A chat's coalescible messages are sent as a digest once none arrived for this long (whole seconds).",
			config.DurationVar(&c.GracePeriod)),
		config.NewSpec(envMaxDelay, config.FmtDur(defaultMaxDelay), "A chat's oldest coalescible message waits at most about this long for its digest (whole seconds).",
			config.DurationVar(&c.MaxDelay)),
		config.NewSpec(envMaxSize, strconv.Itoa(defaultMaxSize), "Most messages in one digest; a chat with this many waiting is flushed at once.",
			config.IntVar(&c.MaxSize)),
		config.NewSpec(envMaxMessages, strconv.Itoa(defaultMaxMessages), "Most Telegram messages one digest is rendered into; items that do not fit go into the next digest.",
			config.IntVar(&c.MaxMessages)),
		config.NewSpec(envReclaimAfter, config.FmtDur(defaultReclaimAfter), "Age at which a digest aggregation left behind by a crashed worker is given back to its chat's queue.",
			config.DurationVar(&c.ReclaimAfter)),
	}
}

// Check records every digest setting that is out of bounds, naming it and
// the fix. Validate reports the same problems for a Config built in code.
func (c Config) Check(p *config.Problems) {
	if c.GracePeriod < time.Second || c.GracePeriod%time.Second != 0 {
		p.Add(envGracePeriod, "must be a whole number of seconds, at least 1s (asynq counts seconds), got %s", config.FmtDur(c.GracePeriod))
	}
	switch {
	case c.MaxDelay%time.Second != 0:
		p.Add(envMaxDelay, "must be a whole number of seconds (e.g. %s), got %s", config.FmtDur(defaultMaxDelay), config.FmtDur(c.MaxDelay))
	case c.MaxDelay < c.GracePeriod:
		p.Add(envMaxDelay, "is %s, below %s which is %s; raise it or lower the grace period",
			config.FmtDur(c.MaxDelay), config.Ref(envGracePeriod), config.FmtDur(c.GracePeriod))
	}
	if c.MaxSize < 1 || c.MaxSize > maxGroupSize {
		p.Add(envMaxSize, "must be between 1 and %d, got %d", maxGroupSize, c.MaxSize)
	}
	if c.MaxMessages < 1 || c.MaxMessages > MaxMessagesLimit {
		p.Add(envMaxMessages, "must be between 1 and %d, got %d", MaxMessagesLimit, c.MaxMessages)
	}
	if c.ReclaimAfter < time.Second || c.ReclaimAfter >= broker.AggregationTimeout {
		p.Add(envReclaimAfter, "must be at least 1s and below %s (when asynq reclaims on its own), got %s",
			config.FmtDur(broker.AggregationTimeout), config.FmtDur(c.ReclaimAfter))
	}
}
