package ratelimit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
)

// The limiter's settings (HERALD_LIMIT_*, HERALD_PRIORITY_QUEUES and
// HERALD_PAUSE_BOT_MAX), bound to Config by Specs.
const (
	EnvLimitBot       = "HERALD_LIMIT_BOT"
	EnvLimitPrivate   = "HERALD_LIMIT_PRIVATE"
	EnvLimitGroup     = "HERALD_LIMIT_GROUP"
	EnvLimitQueues    = "HERALD_LIMIT_QUEUES"
	EnvLimitPriority  = "HERALD_LIMIT_PRIORITY"
	EnvPriorityQueues = "HERALD_PRIORITY_QUEUES"
	EnvLaneQueues     = "HERALD_LANE_QUEUES"
	EnvLimitGuard     = "HERALD_LIMIT_GUARD"
	EnvPauseBotMax    = "HERALD_PAUSE_BOT_MAX"
)

// The priority is the one limit a library user's Config leaves off (nil
// Priority); the worker's settings turn it on for the critical queue with
// these defaults (WithSettingDefaults). They are shared values, read but
// never modified.
var (
	DefaultPriority       = Per(3, time.Second)
	DefaultPriorityQueues = []string{jobs.QueueCritical}
	// DefaultLanes are Config.Lanes as the worker's settings give them.
	DefaultLanes = []string{jobs.QueueBroadcast}
)

// WithSettingDefaults is WithDefaults plus the defaults the worker's
// settings add: DefaultPriority for DefaultPriorityQueues when Priority and
// PriorityQueues are unset, and DefaultLanes when Lanes is. An Unlimited
// ("off") Priority stays off.
func (c Config) WithSettingDefaults() Config {
	if c.Priority == nil {
		c.Priority = slices.Clone(DefaultPriority)
	}
	if c.PriorityQueues == nil {
		c.PriorityQueues = slices.Clone(DefaultPriorityQueues)
	}
	if c.Lanes == nil {
		c.Lanes = slices.Clone(DefaultLanes)
	}
	return c.WithDefaults()
}

// Specs binds the limiter's settings to c, in the order the worker's
// documentation lists them.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		BotLimitSpec(&c.Bot),
		PrivateLimitSpec(&c.Private),
		config.NewSpec(EnvLimitGroup, DefaultGroup.String(), "Sends to one group, supergroup or channel; all windows must hold (the default allows 1 in any second and 20 in any minute).",
			limitVar(&c.Group)),
		config.NewSpec(EnvPriorityQueues, strings.Join(DefaultPriorityQueues, ","), "Queues whose messages take the earliest bot-wide slot reserved for another chat's message (chat limits and the bot limit still hold).",
			queueNamesVar(&c.PriorityQueues)),
		config.NewSpec(EnvLimitPriority, DefaultPriority.String(), `How many priority-queue messages per window may take another message's reserved slot ("off" disables the priority).`,
			limitVar(&c.Priority)),
		config.NewSpec(EnvLaneQueues, strings.Join(DefaultLanes, ","), "Queues that run below the others (broadcasts): unless "+EnvLimitQueues+" limits one, its messages take turns at N - max(1, 3% of N) of each bot-wide window of N, so other queues' messages find a slot within about a window instead of behind its backlog; empty for none.",
			queueNamesVar(&c.Lanes)),
		config.NewSpec(EnvLimitQueues, "", `Per-queue limits as NAME=LIMIT pairs, e.g. "default=20/s,low=5/s"; join one queue's windows with "+" ("default=20/s+100/m").`,
			queueLimitsVar(&c.Queues)),
		config.NewSpec(EnvLimitGuard, config.FmtDur(DefaultGuard), "Added to every window, so that sends N apart are at least the window plus this much apart by Redis' clock; absorbs dispatch and network jitter. The paid-broadcast windows keep twice it.",
			guardVar(&c.Guard)),
		config.NewSpec(EnvPauseBotMax, config.FmtDur(DefaultBotPauseMax), `Longest bot-wide pause one 429 causes; Telegram's 429 does not say whether the chat or the whole bot is flooded. "off" or a negative value: a 429 pauses only its chat.`,
			config.PauseVar(&c.BotPauseMax)),
	}
}

// BotLimitSpec binds HERALD_LIMIT_BOT to l. The worker enforces it; the
// producer reads it too, for the time a broadcast still needs.
func BotLimitSpec(l *Limit) config.Spec {
	return config.NewSpec(EnvLimitBot, DefaultBot.String(), `Sends of the whole bot: windows "N/span" separated by commas, each allowing N sends in any span `+
		`(s, m, h or a Go duration such as 6s or 100ms); "off" disables.`,
		limitVar(l))
}

// PrivateLimitSpec binds HERALD_LIMIT_PRIVATE to l (the worker's limit,
// read by the producer as BotLimitSpec is).
func PrivateLimitSpec(l *Limit) config.Spec {
	return config.NewSpec(EnvLimitPrivate, DefaultPrivate.String(), "Sends to one private chat (windows, as for "+EnvLimitBot+").", limitVar(l))
}

// CheckLimit records a problem of the limit l that the setting env holds:
// a window out of bounds.
func CheckLimit(p *config.Problems, env string, l Limit) {
	if err := l.check(); err != nil {
		p.Add(env, "%v (got %s)", err, l)
	}
}

// Check reports every problem of the limits by the setting that sets them:
// windows out of bounds and a guard not below the shortest bot, private or
// group window. Whether the queues it names (PriorityQueues, the keys of
// Queues) exist is the caller's to check.
func (c Config) Check(p *config.Problems) {
	check := func(env string, l Limit) {
		if err := l.check(); err != nil {
			p.Add(env, "%v (got %s)", err, l)
		}
	}
	check(EnvLimitBot, c.Bot)
	check(EnvLimitPrivate, c.Private)
	check(EnvLimitGroup, c.Group)
	check(EnvLimitPriority, c.Priority)
	c.checkGuard(p)
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		if err := c.Queues[name].check(); err != nil {
			p.Add(EnvLimitQueues, "has a limit for queue %q that %v", name, err)
		}
	}
}

// checkGuard reports a guard that is not below the shortest window of the
// bot, private and group limits: no send could then ever fit.
func (c Config) checkGuard(p *config.Problems) {
	if c.Guard <= 0 {
		return
	}
	for _, l := range []struct {
		env string
		lim Limit
	}{{EnvLimitBot, c.Bot}, {EnvLimitPrivate, c.Private}, {EnvLimitGroup, c.Group}} {
		if sh := l.lim.Shortest(); len(l.lim) > 0 && c.Guard >= sh {
			p.Add(EnvLimitGuard, "is %s, not below the shortest window of %s, %s; lower it below %s (default %s)",
				config.FmtDur(c.Guard), config.Ref(l.env), l.lim, config.FmtDur(sh), config.FmtDur(DefaultGuard))
			return
		}
	}
}

// limitVar binds a limit written as windows separated by commas, or "off".
func limitVar(p *Limit) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			l, err := parseLimit(s, ",")
			if err != nil {
				return err
			}
			*p = l
			return nil
		},
		Get: func() string { return p.String() },
	}
}

// guardVar binds HERALD_LIMIT_GUARD: a duration of 0 or more, where 0
// stores NoGuard (a zero Guard would select the default).
func guardVar(p *time.Duration) config.Binding {
	d := config.DurationVar(p)
	return config.Binding{
		Set: func(s string) error {
			var v time.Duration
			if err := config.DurationVar(&v).Set(s); err != nil {
				return err
			}
			switch {
			case v < 0:
				return fmt.Errorf("must be >= 0 (e.g. %s; 0 for no guard)", config.FmtDur(DefaultGuard))
			case v == 0:
				v = NoGuard
			}
			*p = v
			return nil
		},
		Get: func() string {
			if *p < 0 {
				return config.FmtDur(0)
			}
			return d.Get()
		},
	}
}

// queueNamesVar binds HERALD_PRIORITY_QUEUES: queue names separated by
// commas.
func queueNamesVar(p *[]string) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			names := []string{}
			if strings.TrimSpace(s) == "" {
				*p = names
				return nil
			}
			for item := range strings.SplitSeq(s, ",") {
				name := strings.TrimSpace(item)
				switch {
				case name == "":
					return fmt.Errorf("has an empty queue name; list queue names separated by commas, such as %q", jobs.QueueCritical)
				case strings.Contains(name, "="):
					return fmt.Errorf("gives %q a priority; list only queue names (their priorities are in HERALD_QUEUES)", name)
				case slices.Contains(names, name):
					return fmt.Errorf("lists queue %q twice; keep one entry per queue", name)
				}
				names = append(names, name)
			}
			*p = names
			return nil
		},
		Get: func() string { return strings.Join(*p, ",") },
	}
}

// queueLimitsVar binds "default=20/s+100/m,low=5/s": NAME=LIMIT pairs
// separated by commas, a queue's windows joined with "+".
func queueLimitsVar(p *map[string]Limit) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			if strings.TrimSpace(s) == "" {
				*p = nil
				return nil
			}
			m := map[string]Limit{}
			for item := range strings.SplitSeq(s, ",") {
				if err := parseQueueLimit(m, strings.TrimSpace(item)); err != nil {
					return err
				}
			}
			*p = m
			return nil
		},
		Get: func() string { return formatQueueLimits(*p) },
	}
}

// parseQueueLimit reads one NAME=LIMIT item of HERALD_LIMIT_QUEUES into m.
func parseQueueLimit(m map[string]Limit, item string) error {
	name, lim, ok := strings.Cut(item, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		if _, err := parseWindow(item, "+"); err == nil && len(m) > 0 {
			return fmt.Errorf(`has %q without a queue name; join one queue's windows with "+", as in "default=20/s+100/m,low=5/s"`, item)
		}
		return errors.New(`must be NAME=LIMIT pairs such as "default=20/s,low=5/s"; join one queue's windows with "+" ("default=20/s+100/m")`)
	}
	if _, dup := m[name]; dup {
		return fmt.Errorf("lists queue %q twice; keep one entry per queue", name)
	}
	if strings.TrimSpace(lim) == "" {
		return fmt.Errorf(`gives queue %q no limit; write one such as "%s=20/s", or "%s=off"`, name, name, name)
	}
	l, err := parseLimit(lim, "+")
	if err != nil {
		return fmt.Errorf("has limit %q for queue %q, which %v", strings.TrimSpace(lim), name, err)
	}
	m[name] = l
	return nil
}

// formatQueueLimits renders per-queue limits by name, windows joined with "+".
func formatQueueLimits(m map[string]Limit) string {
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		l := m[n]
		if l == nil {
			l = Unlimited
		}
		parts[i] = n + "=" + l.join("+")
	}
	return strings.Join(parts, ",")
}
