package app

import (
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// Limits converts configured limits to the limiter's form.
func Limits(l config.Limits) ratelimit.Config {
	conv := func(x config.Limit) ratelimit.Limit {
		return ratelimit.Limit{Interval: x.Rate.Interval(), Burst: max(x.Burst, 1)}
	}
	c := ratelimit.Config{Bot: conv(l.Bot), Private: conv(l.Private), Group: conv(l.Group),
		PriorityQueues: l.PriorityQueues}
	if !l.Priority.Rate.IsZero() {
		c.Priority = conv(l.Priority)
	}
	if len(l.Queues) > 0 {
		c.Queues = map[string]ratelimit.Limit{}
		for q, r := range l.Queues {
			c.Queues[q] = ratelimit.Limit{Interval: r.Interval(), Burst: 1}
		}
	}
	return c
}
