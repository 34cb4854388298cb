package ratelimit

import (
	"errors"
	"slices"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// Config holds the fleet's limits. Its defaults are Telegram's documented
// limits, exactly.
type Config struct {
	// Bot limits all messages of the bot together. Default 30 per second.
	Bot Limit
	// Private limits each private chat (positive chat id). Default 1 per
	// second.
	Private Limit
	// Group limits each group, supergroup or channel (negative id or
	// @username). Default 1 per second and 20 per minute.
	Group Limit
	// Queues optionally limits whole queues, by name.
	Queues map[string]Limit
	// PriorityQueues name the queues whose messages do not wait behind the
	// bot-wide slots other messages have already reserved (typically
	// "critical"). Their chat limits still hold, and so does the bot-wide
	// limit: a priority message takes the earliest reserved slot of another
	// chat's message, which moves to the end of the bot-wide schedule.
	PriorityQueues []string
	// Lanes name the queues that run below the others (the broadcast
	// queue): unless a queue has a limit of its own (Queues), its messages
	// take their turns at N - max(1, 3% of N) of every bot-wide window of
	// N (29 of 30 a second, 970 of a paid 1,000), so a message of any other
	// queue finds a bot-wide slot within about a window instead of behind
	// the lane's whole backlog. The worker's settings default it to the
	// broadcast queue (WithSettingDefaults).
	Lanes []string
	// Priority bounds how many messages may take another's slot that way.
	// Nil (the default) or Unlimited ("off") turns the priority off; the
	// worker's settings turn it on (WithSettingDefaults: DefaultPriority
	// for DefaultPriorityQueues).
	Priority Limit
	// Guard is added to every window: two sends N places apart are always at
	// least Per+Guard apart by Redis' clock, which absorbs the spread between
	// the planned send time and the moment the request reaches Telegram.
	// A task that comes back to its slot later than half the Guard takes a
	// new one; the other half is for the trip to Telegram.
	// Default 20ms: on a loaded 2-core machine running three workers, the
	// fake Bot API, Redis and the benchmark, sends reached the fake up to
	// 21 ms off their planned spacing (the benchmark's "min slack"), and
	// 10ms let a few 429s through. Zero selects that default; a negative
	// Guard (NoGuard) means no guard at all. It must stay below the
	// shortest window of Bot, Private and Group.
	Guard time.Duration
	// SleepMax is the longest wait a handler sleeps through while holding its
	// worker slot; longer waits defer the task, which comes back SleepMax/2
	// before its slot and sleeps the rest. Default 250ms.
	SleepMax time.Duration
	// BotPauseMax bounds the bot-wide pause that one 429 causes. Telegram's
	// answer does not say whether the chat or the whole bot is flooded, so a
	// 429 pauses the chat for its retry_after and the whole bot for
	// min(retry_after, BotPauseMax): nothing is sent into a bot-wide flood
	// wait, and a chat's long wait stalls the others for BotPauseMax at
	// most. Negative: a 429 pauses its chat only. Default 10s.
	BotPauseMax time.Duration
}

// Defaults of Config's limits: Telegram's documented limits. They are
// shared values, read but never modified; WithDefaults hands each Config a
// copy, so a caller that edits its windows cannot change another's.
var (
	DefaultBot     = Per(30, time.Second)
	DefaultPrivate = Per(1, time.Second)
	DefaultGroup   = Per(1, time.Second).And(Per(20, time.Minute))
)

// Defaults of Config's margins. The worker's settings render their
// documented defaults from these, so the two cannot disagree.
const (
	DefaultGuard       = 20 * time.Millisecond
	defaultSleepMax    = 250 * time.Millisecond
	DefaultBotPauseMax = 10 * time.Second
)

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Bot == nil {
		c.Bot = slices.Clone(DefaultBot)
	}
	if c.Private == nil {
		c.Private = slices.Clone(DefaultPrivate)
	}
	if c.Group == nil {
		c.Group = slices.Clone(DefaultGroup)
	}
	if c.Guard == 0 {
		c.Guard = DefaultGuard
	}
	if c.SleepMax == 0 {
		c.SleepMax = defaultSleepMax
	}
	if c.BotPauseMax == 0 {
		c.BotPauseMax = DefaultBotPauseMax
	}
	return c
}

// NoGuard is the Config.Guard that adds nothing to the windows. A zero
// Guard selects DefaultGuard instead, so "no guard" needs a value of its
// own; any negative Guard means the same.
const NoGuard time.Duration = -1

// EffectiveGuard is the margin the limiter adds to every window: Guard,
// or 0 when it is negative (NoGuard).
func (c Config) EffectiveGuard() time.Duration { return max(c.Guard, 0) }

// validate checks the config as New takes it: the rules of its settings
// (Check), reported by their environment variables, and SleepMax, which
// no setting sets.
func (c Config) validate() error {
	var p config.Problems
	c.Check(&p)
	if c.SleepMax < 0 {
		p = append(p, errors.New("ratelimit: SleepMax must be >= 0"))
	}
	return p.Err()
}
