package broadcast

import (
	"strconv"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// The broadcasts' own settings; the producer also reads the worker's bot
// and private-chat limits (ratelimit.BotLimitSpec, PrivateLimitSpec) for
// the time a broadcast still needs.
const (
	EnvMaxChats     = "HERALD_BROADCAST_MAX_CHATS"
	EnvMaxBodyBytes = "HERALD_BROADCAST_MAX_BODY_BYTES"
)

// Defaults and bounds of Config.
const (
	// DefaultMaxChats is the most chats one broadcast may list.
	DefaultMaxChats = 100_000
	// maxMaxChats bounds the setting: a broadcast's chat list and its
	// status are read whole, in memory, on every GET.
	maxMaxChats = 1_000_000
	// DefaultMaxBodyBytes bounds a broadcast's request body: 100,000
	// chats with a few values each fit.
	DefaultMaxBodyBytes = 32 << 20
)

// Config holds the broadcasts' settings.
type Config struct {
	// MaxChats is the most chats one broadcast or audience may list,
	// repeats included (the list is checked before it is decoded) (HERALD_BROADCAST_MAX_CHATS, default
	// [DefaultMaxChats]).
	MaxChats int
	// MaxBodyBytes bounds the body of POST /v1/broadcasts and PUT
	// /v1/audiences/{name} (HERALD_BROADCAST_MAX_BODY_BYTES, default
	// [DefaultMaxBodyBytes]); other requests keep HERALD_MAX_BODY_BYTES.
	MaxBodyBytes int64
	// BotLimit and ChatLimit are the worker's HERALD_LIMIT_BOT and
	// HERALD_LIMIT_PRIVATE: a broadcast's ETA is its messages still to go
	// at the bot's rate, and no less than the chat spacing between the
	// parts of a long message.
	BotLimit  ratelimit.Limit
	ChatLimit ratelimit.Limit
}

// Specs binds the settings to c, in documentation order.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvMaxChats, strconv.Itoa(DefaultMaxChats), "Most chats one broadcast (or audience) may list.", config.IntVar(&c.MaxChats)),
		config.NewSpec(EnvMaxBodyBytes, config.FormatBytes(DefaultMaxBodyBytes), "Largest body of POST /v1/broadcasts and PUT /v1/audiences/{name}.",
			config.BytesVar(&c.MaxBodyBytes)),
		ratelimit.BotLimitSpec(&c.BotLimit),
		ratelimit.PrivateLimitSpec(&c.ChatLimit),
	}
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxChats == 0 {
		c.MaxChats = DefaultMaxChats
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.BotLimit == nil {
		c.BotLimit = ratelimit.DefaultBot
	}
	if c.ChatLimit == nil {
		c.ChatLimit = ratelimit.DefaultPrivate
	}
	return c
}

// Check records every setting out of bounds; c must have its defaults.
func (c Config) Check(p *config.Problems) {
	if c.MaxChats < 1 || c.MaxChats > maxMaxChats {
		p.Add(EnvMaxChats, "must be between 1 and %d, got %d", maxMaxChats, c.MaxChats)
	}
	if c.MaxBodyBytes < 1<<10 {
		p.Add(EnvMaxBodyBytes, "must be at least 1KiB, got %s", config.FormatBytes(c.MaxBodyBytes))
	}
	ratelimit.CheckLimit(p, ratelimit.EnvLimitBot, c.BotLimit)
	ratelimit.CheckLimit(p, ratelimit.EnvLimitPrivate, c.ChatLimit)
}
