package ratelimit_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// load reads the limit settings from env and args over the settings'
// defaults, as the worker's settings do, and checks them.
func load(env map[string]string, args ...string) (ratelimit.Config, error) {
	c := ratelimit.Config{}.WithSettingDefaults()
	if _, err := config.Load("worker", c.Specs(), args, func(k string) string { return env[k] }); err != nil {
		return ratelimit.Config{}, err
	}
	var p config.Problems
	c.Check(&p)
	return c, p.Err()
}

func TestSettingsDefaults(t *testing.T) {
	t.Parallel()
	got, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ratelimit.Config{
		Bot:            ratelimit.Per(30, time.Second),
		Private:        ratelimit.Per(1, time.Second),
		Group:          ratelimit.Per(1, time.Second).And(ratelimit.Per(20, time.Minute)),
		PriorityQueues: []string{"critical"},
		Lanes:          []string{"broadcast"},
		Priority:       ratelimit.Per(3, time.Second),
		Guard:          20 * time.Millisecond,
		SleepMax:       250 * time.Millisecond,
		BotPauseMax:    10 * time.Second,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults =\n%+v\nwant\n%+v", got, want)
	}
	// The limiter's own defaults agree, but leave the priority and the
	// lanes off.
	lib := ratelimit.Config{}.WithDefaults()
	if lib.Priority != nil || lib.PriorityQueues != nil || lib.Lanes != nil {
		t.Errorf("a library Config has a priority or lanes by default: %+v", lib)
	}
	lib.Priority, lib.PriorityQueues, lib.Lanes = want.Priority, want.PriorityQueues, want.Lanes
	if !reflect.DeepEqual(lib, want) {
		t.Errorf("ratelimit defaults %+v differ from the settings' %+v", lib, want)
	}
}

func TestSettingsOff(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HERALD_LIMIT_BOT":      "off",
		"HERALD_LIMIT_PRIORITY": "off",
		"HERALD_LIMIT_QUEUES":   "low=off,default=20/s+100/m",
		"HERALD_LIMIT_GUARD":    "0s",
		"HERALD_PAUSE_BOT_MAX":  "off",
	}
	got, err := load(env)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Bot.Off() {
		t.Errorf("Bot = %#v, want ratelimit.Unlimited", got.Bot)
	}
	if !got.Priority.Off() {
		t.Errorf("Priority = %#v, want off", got.Priority)
	}
	want := map[string]ratelimit.Limit{"low": ratelimit.Unlimited, "default": ratelimit.Per(20, time.Second).And(ratelimit.Per(100, time.Minute))}
	if !reflect.DeepEqual(got.Queues, want) {
		t.Errorf("Queues = %v, want %v", got.Queues, want)
	}
	if got.Guard != ratelimit.NoGuard || got.EffectiveGuard() != 0 {
		t.Errorf("Guard = %v (effective %v), want NoGuard", got.Guard, got.EffectiveGuard())
	}
	if got.BotPauseMax >= 0 {
		t.Errorf("BotPauseMax = %v, want negative (chat-only pause)", got.BotPauseMax)
	}
	if d := got.WithSettingDefaults(); !reflect.DeepEqual(d, got) {
		t.Errorf("the defaults undo the settings:\n%+v\nwas\n%+v", d, got)
	}
	if s := findSpec(t, &got, "HERALD_LIMIT_GUARD").Get(); s != "0s" {
		t.Errorf("no guard renders %q, want 0s", s)
	}
}

// findSpec returns c's spec of env.
func findSpec(t *testing.T, c *ratelimit.Config, env string) config.Spec {
	t.Helper()
	for _, s := range c.Specs() {
		if s.Env == env {
			return s
		}
	}
	t.Fatalf("no spec %s", env)
	return config.Spec{}
}

func TestSettingsPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(ratelimit.Config) bool
	}{
		{"env off disables a limit", map[string]string{"HERALD_LIMIT_BOT": "off"}, nil,
			func(c ratelimit.Config) bool { return c.Bot.Off() && c.Bot != nil }},
		{"flag limit over env", map[string]string{"HERALD_LIMIT_GROUP": "off"}, []string{"-limit-group", "1/s,15/m"},
			func(c ratelimit.Config) bool {
				return reflect.DeepEqual(c.Group, ratelimit.Per(1, time.Second).And(ratelimit.Per(15, time.Minute)))
			}},
		{"empty flag disables a limit", nil, []string{"-limit-private="},
			func(c ratelimit.Config) bool { return c.Private.Off() }},
		{"priority off", map[string]string{"HERALD_LIMIT_PRIORITY": "OFF"}, nil,
			func(c ratelimit.Config) bool { return c.Priority.Off() }},
		{"priority queues", map[string]string{"HERALD_PRIORITY_QUEUES": " alerts , pages "}, nil,
			func(c ratelimit.Config) bool { return reflect.DeepEqual(c.PriorityQueues, []string{"alerts", "pages"}) }},
		{"no priority queues", nil, []string{"-priority-queues="},
			func(c ratelimit.Config) bool { return c.PriorityQueues != nil && len(c.PriorityQueues) == 0 }},
		{"queue limit off", map[string]string{"HERALD_LIMIT_QUEUES": "low=off,default=5/s"}, nil,
			func(c ratelimit.Config) bool {
				return reflect.DeepEqual(c.Queues, map[string]ratelimit.Limit{"low": {}, "default": ratelimit.Per(5, time.Second)})
			}},
		{"guard zero", map[string]string{"HERALD_LIMIT_GUARD": "0s"}, nil,
			func(c ratelimit.Config) bool { return c.Guard == ratelimit.NoGuard }},
		{"guard flag", map[string]string{"HERALD_LIMIT_GUARD": "0s"}, []string{"-limit-guard=5ms"},
			func(c ratelimit.Config) bool { return c.Guard == 5*time.Millisecond }},
		{"pause flag", map[string]string{"HERALD_PAUSE_BOT_MAX": "off"}, []string{"-pause-bot-max", "2s"},
			func(c ratelimit.Config) bool { return c.BotPauseMax == 2*time.Second }},
		{"pause zero is off", nil, []string{"-pause-bot-max=0s"},
			func(c ratelimit.Config) bool { return c.BotPauseMax == -1 }},
		{"pause negative is off", map[string]string{"HERALD_PAUSE_BOT_MAX": "-1s"}, nil,
			func(c ratelimit.Config) bool { return c.BotPauseMax == -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Fatalf("unexpected config %+v", c)
			}
		})
	}
}

func TestSettingsParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"bad env limit", map[string]string{"HERALD_LIMIT_BOT": "30 per second"},
			`HERALD_LIMIT_BOT (-limit-bot) must be one or more windows "N/span" separated by commas, where span is s, m, h or a Go duration (e.g. "30/s", "1/s,20/m", "20/6s", "30/100ms"), or "off" to disable, got "30 per second"`},
		{"fractional count", map[string]string{"HERALD_LIMIT_PRIVATE": "2.5/s"},
			`HERALD_LIMIT_PRIVATE (-limit-private) has the fractional send count 2.5; write whole sends per span, e.g. "5/2s", got "2.5/s"`},
		{"off mixed", map[string]string{"HERALD_LIMIT_GROUP": "off,20/m"},
			`HERALD_LIMIT_GROUP (-limit-group) mixes "off" with windows; write either "off" alone or only the windows, got "off,20/m"`},
		{"bad window among several", map[string]string{"HERALD_LIMIT_GROUP": "1/s,20/min,3/d"},
			`HERALD_LIMIT_GROUP (-limit-group) has the window "3/d", which must be one or more windows`},
		{"bad queue limit", map[string]string{"HERALD_LIMIT_QUEUES": "default=fast"},
			`HERALD_LIMIT_QUEUES (-limit-queues) has limit "fast" for queue "default", which must be windows "N/span" joined with "+"`},
		{"queue limit without name", map[string]string{"HERALD_LIMIT_QUEUES": "20/s"},
			`HERALD_LIMIT_QUEUES (-limit-queues) must be NAME=LIMIT pairs such as "default=20/s,low=5/s"; join one queue's windows with "+"`},
		{"queue windows joined with a comma", map[string]string{"HERALD_LIMIT_QUEUES": "default=20/s,100/m"},
			`HERALD_LIMIT_QUEUES (-limit-queues) has "100/m" without a queue name; join one queue's windows with "+", as in "default=20/s+100/m,low=5/s"`},
		{"queue without limit", map[string]string{"HERALD_LIMIT_QUEUES": "default="},
			`HERALD_LIMIT_QUEUES (-limit-queues) gives queue "default" no limit`},
		{"queue limit twice", map[string]string{"HERALD_LIMIT_QUEUES": "low=1/s,low=2/s"},
			`HERALD_LIMIT_QUEUES (-limit-queues) lists queue "low" twice`},
		{"priority queue twice", map[string]string{"HERALD_PRIORITY_QUEUES": "critical,critical"},
			`HERALD_PRIORITY_QUEUES (-priority-queues) lists queue "critical" twice`},
		{"priority queue empty", map[string]string{"HERALD_PRIORITY_QUEUES": "critical,,alerts"},
			`HERALD_PRIORITY_QUEUES (-priority-queues) has an empty queue name`},
		{"priority queue with a weight", map[string]string{"HERALD_PRIORITY_QUEUES": "critical=6"},
			`HERALD_PRIORITY_QUEUES (-priority-queues) gives "critical=6" a priority; list only queue names`},
		{"bad guard", map[string]string{"HERALD_LIMIT_GUARD": "10"},
			`HERALD_LIMIT_GUARD (-limit-guard) must be a duration with a unit`},
		{"guard negative", map[string]string{"HERALD_LIMIT_GUARD": "-1ms"},
			`HERALD_LIMIT_GUARD (-limit-guard) must be >= 0 (e.g. 20ms; 0 for no guard), got "-1ms"`},
		{"bad pause", map[string]string{"HERALD_PAUSE_BOT_MAX": "never"},
			`HERALD_PAUSE_BOT_MAX (-pause-bot-max) must be a duration with a unit, such as 5s or 1m, or "off", got "never"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nlacks %q", err, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*ratelimit.Config)
		want   string
	}{
		{"window without sends", func(c *ratelimit.Config) { c.Bot = ratelimit.Per(0, time.Second) },
			`HERALD_LIMIT_BOT (-limit-bot) allows 0 sends; a window allows at least 1 (use "off" to disable the limit) (got 0/s)`},
		{"malformed window", func(c *ratelimit.Config) {
			c.Group = ratelimit.Per(1, time.Second).And(ratelimit.Per(20, time.Microsecond))
		},
			"HERALD_LIMIT_GROUP (-limit-group) has the window 20/1µs, which has a span of 1µs, below the 1ms minimum"},
		{"priority window", func(c *ratelimit.Config) { c.Priority = ratelimit.Per(ratelimit.MaxWindowSends+1, time.Hour) },
			"HERALD_LIMIT_PRIORITY (-limit-priority) allows 10001 sends per span, more than 10000"},
		{"guard not below the shortest window", func(c *ratelimit.Config) {
			c.Group = ratelimit.Per(20, time.Minute).And(ratelimit.Per(1, 10*time.Millisecond))
		}, "HERALD_LIMIT_GUARD (-limit-guard) is 20ms, not below the shortest window of HERALD_LIMIT_GROUP (-limit-group), 20/m,1/10ms; lower it below 10ms (default 20ms)"},
		{"queue limit malformed", func(c *ratelimit.Config) { c.Queues = map[string]ratelimit.Limit{"low": {{N: 1}}} },
			`HERALD_LIMIT_QUEUES (-limit-queues) has a limit for queue "low" that has a span of 0s, below the 1ms minimum`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ratelimit.Config{}.WithSettingDefaults()
			var p config.Problems
			if c.Check(&p); p.Err() != nil {
				t.Fatalf("defaults do not check: %v", p.Err())
			}
			tc.mutate(&c)
			c.Check(&p)
			if err := p.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nlacks %q", err, tc.want)
			}
		})
	}
}

// TestCheckAllowsDisabledParts: limits that are off leave the guard
// nothing to stay below, and no guard (NoGuard) is no problem.
func TestCheckAllowsDisabledParts(t *testing.T) {
	t.Parallel()
	c := ratelimit.Config{Bot: ratelimit.Unlimited, Private: ratelimit.Unlimited, Group: ratelimit.Unlimited,
		Priority: ratelimit.Unlimited, Guard: time.Hour, BotPauseMax: -1,
		Queues: map[string]ratelimit.Limit{"low": ratelimit.Unlimited}}
	for _, guard := range []time.Duration{time.Hour, ratelimit.NoGuard} {
		c.Guard = guard
		var p config.Problems
		if c.Check(&p); p.Err() != nil {
			t.Errorf("Guard %v: %v", guard, p.Err())
		}
	}
	c = ratelimit.Config{Guard: ratelimit.NoGuard}.WithDefaults()
	var p config.Problems
	if c.Check(&p); p.Err() != nil || c.Guard != ratelimit.NoGuard {
		t.Errorf("NoGuard with the default windows: %v, Guard %v", p.Err(), c.Guard)
	}
}

// TestNewReportsSettings: the limiter refuses a Config with the settings'
// own messages, as a library user gets them.
func TestNewReportsSettings(t *testing.T) {
	t.Parallel()
	_, err := ratelimit.New(nil, ratelimit.Config{Private: ratelimit.Per(1, 10*time.Millisecond)})
	if err == nil || !strings.Contains(err.Error(), "HERALD_LIMIT_GUARD (-limit-guard) is 20ms, not below the shortest window of HERALD_LIMIT_PRIVATE") {
		t.Fatalf("New = %v", err)
	}
}
