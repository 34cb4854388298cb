package app

import (
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/settings"
)

// Limits converts configured limits, as loaded (defaults filled), to the
// limiter's form. A nil limit stays nil (the limiter's default), "off"
// becomes ratelimit.Unlimited, and an "off" priority turns the priority off.
// A zero Guard means no guard, which the limiter, reading zero as "default",
// spells as one nanosecond; a negative BotPauseMax ("off") means a 429 pauses
// only its chat. A queue whose limit is "off" is left out of Queues.
func Limits(l settings.Limits) ratelimit.Config {
	c := ratelimit.Config{
		Bot:            l.Bot.Limit(),
		Private:        l.Private.Limit(),
		Group:          l.Group.Limit(),
		PriorityQueues: l.PriorityQueues,
		Guard:          l.Guard,
		BotPauseMax:    l.BotPauseMax,
	}
	if len(l.Priority) > 0 {
		c.Priority = l.Priority.Limit()
	}
	if len(l.Queues) > 0 {
		c.Queues = make(map[string]ratelimit.Limit, len(l.Queues))
		for q, ws := range l.Queues {
			if len(ws) > 0 {
				c.Queues[q] = ws.Limit()
			}
		}
	}
	if c.Guard == 0 {
		// The limiter counts microseconds: one nanosecond is no guard.
		c.Guard = time.Nanosecond
	}
	return c
}
