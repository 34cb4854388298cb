package digest

import (
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/markup"
)

// Config shapes digests. The grouping fields are settings of each worker's
// asynq server; the others govern the digest handler.
type Config struct {
	// GracePeriod flushes a group once no item has joined it for this long;
	// default 10s. asynq counts whole seconds and needs at least one.
	GracePeriod time.Duration
	// MaxDelay flushes a group once its oldest item has waited this long,
	// however busy the destination; default 30s. asynq checks groups every
	// GracePeriod (every 7s at most), so a flush can come that much later.
	MaxDelay time.Duration
	// MaxSize flushes a group as soon as it holds this many items, and is
	// the most items one digest takes; default 100.
	MaxSize int
	// MaxMessages is the most messages one digest is rendered into; items
	// that do not fit are carried to the next digest. Default 3.
	MaxMessages int
	// ReclaimAfter returns an aggregation set to its group when it is this
	// old and still there (its aggregator died before storing the digest);
	// default 30s. asynq itself waits two minutes.
	ReclaimAfter time.Duration
	// ClaimTTL is how long the record of which digest delivers an item is
	// kept; default 7 days. It must outlast a digest task's retries.
	ClaimTTL time.Duration
	// MessageLimit is the most visible UTF-16 units of one digest message;
	// default (and maximum) Telegram's 4096.
	MessageLimit int
}

// Defaults of Config.
const (
	defaultGracePeriod  = 10 * time.Second
	defaultMaxDelay     = 30 * time.Second
	defaultMaxSize      = 100
	defaultMaxMessages  = 3
	defaultReclaimAfter = 30 * time.Second
	defaultClaimTTL     = 7 * 24 * time.Hour
)

// Bounds Config.Validate enforces.
const (
	// maxGroupSize bounds MaxSize: one digest claims all its items in one
	// Redis script.
	maxGroupSize = 1000
	// MaxMessagesLimit bounds MaxMessages.
	MaxMessagesLimit = 10
	// minMessageLimit keeps room for a header, a footer and one title.
	minMessageLimit = 200
)

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.GracePeriod == 0 {
		c.GracePeriod = defaultGracePeriod
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = defaultMaxDelay
	}
	if c.MaxSize == 0 {
		c.MaxSize = defaultMaxSize
	}
	if c.MaxMessages == 0 {
		c.MaxMessages = defaultMaxMessages
	}
	if c.ReclaimAfter == 0 {
		c.ReclaimAfter = defaultReclaimAfter
	}
	if c.ClaimTTL == 0 {
		c.ClaimTTL = defaultClaimTTL
	}
	if c.MessageLimit == 0 {
		c.MessageLimit = markup.MaxMessageLen
	}
	return c
}

// Validate reports every out-of-range field, naming it and the fix: the
// settings' problems as Check words them, then those of the fields that
// are not settings.
func (c Config) Validate() error {
	var p config.Problems
	c.Check(&p)
	if c.ClaimTTL < time.Hour {
		p = append(p, fmt.Errorf("digest: Config.ClaimTTL must be at least 1h (it must outlast a digest's retries), got %v", c.ClaimTTL))
	}
	if c.MessageLimit < minMessageLimit || c.MessageLimit > markup.MaxMessageLen {
		p = append(p, fmt.Errorf("digest: Config.MessageLimit must be between %d and %d, got %d", minMessageLimit, markup.MaxMessageLen, c.MessageLimit))
	}
	return p.Err()
}
