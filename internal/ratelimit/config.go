package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Limit is a rate as an emission interval plus a burst allowance.
type Limit struct {
	// Interval between messages at the sustained rate; zero disables the limit.
	Interval time.Duration
	// Burst is how many messages may go back to back after a quiet spell; at
	// least 1.
	Burst int
}

// Per builds a Limit of n messages per period.
func Per(n float64, period time.Duration, burst int) Limit {
	if n <= 0 {
		return Limit{}
	}
	return Limit{Interval: time.Duration(float64(period) / n), Burst: burst}
}

func (l Limit) tolerance() time.Duration {
	if l.Burst <= 1 {
		return 0
	}
	return time.Duration(l.Burst-1) * l.Interval
}

// Config holds the fleet's limits. Defaults follow Telegram's documented
// limits with no burst, which is safe against the real API.
type Config struct {
	// Bot limits all messages of the bot together. Default 30/s, burst 10.
	Bot Limit
	// Private limits each private chat (positive chat id). Default 1/s.
	Private Limit
	// Group limits each group, supergroup or channel (negative id or
	// @username). Default 20/min.
	Group Limit
	// Queues optionally limits whole queues, by name.
	Queues map[string]Limit
	// PriorityQueues name the queues whose messages do not wait behind the
	// bot-wide slots other messages have already reserved (typically
	// "critical"). Their chat limits still hold.
	PriorityQueues []string
	// Priority bounds how many such messages may go ahead of the bot-wide
	// schedule: each one that does makes the bot run one message over its
	// rate for as long as the schedule is booked ahead. Zero (the default)
	// turns the priority off.
	Priority Limit
	// SleepMax is the longest wait a handler sleeps through while holding its
	// worker slot; longer waits defer the task. Default 250ms.
	SleepMax time.Duration
	// LateTolerance is how late a task may come back for its reserved slot and
	// still use it (capped at a quarter of the chat's interval); a later task
	// reserves afresh (the old slot is wasted, which is safe). Default 250ms.
	LateTolerance time.Duration
	// FloodChats is how many distinct chats answering 429 within FloodWindow
	// mean a bot-wide flood, pausing the whole bot. Default 3.
	FloodChats int
	// FloodWindow is the window of FloodChats. Default 2s.
	FloodWindow time.Duration
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Bot == (Limit{}) {
		c.Bot = Per(30, time.Second, 10)
	}
	if c.Private == (Limit{}) {
		c.Private = Per(1, time.Second, 1)
	}
	if c.Group == (Limit{}) {
		c.Group = Per(20, time.Minute, 1)
	}
	if c.SleepMax == 0 {
		c.SleepMax = 250 * time.Millisecond
	}
	if c.LateTolerance == 0 {
		c.LateTolerance = 250 * time.Millisecond
	}
	if c.FloodChats == 0 {
		c.FloodChats = 3
	}
	if c.FloodWindow == 0 {
		c.FloodWindow = 2 * time.Second
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	check := func(name string, l Limit) {
		if l.Interval < 0 {
			errs = append(errs, fmt.Errorf("ratelimit: %s.Interval must be >= 0, got %v", name, l.Interval))
		}
		if l.Interval > 0 && l.Burst < 1 {
			errs = append(errs, fmt.Errorf("ratelimit: %s.Burst must be >= 1, got %d", name, l.Burst))
		}
	}
	check("Bot", c.Bot)
	check("Priority", c.Priority)
	check("Private", c.Private)
	check("Group", c.Group)
	for q, l := range c.Queues {
		check("Queues["+q+"]", l)
	}
	if c.SleepMax < 0 || c.LateTolerance < 0 {
		errs = append(errs, errors.New("ratelimit: SleepMax and LateTolerance must be >= 0"))
	}
	return errors.Join(errs...)
}
