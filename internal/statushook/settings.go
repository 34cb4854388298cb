package statushook

import (
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// The status callbacks' settings. The secret and the allow-list are read by
// both binaries (the producer checks callback URLs when a sender names
// them, and shows an endpoint's secret; the workers sign and post); the
// others only by the workers, which deliver.
const (
	EnvSecret        = "HERALD_CALLBACK_SECRET"
	EnvSecretFile    = "HERALD_CALLBACK_SECRET_FILE"
	EnvAllow         = "HERALD_CALLBACK_ALLOW"
	EnvRetrySchedule = "HERALD_CALLBACK_RETRY_SCHEDULE"
	EnvDisableAfter  = "HERALD_CALLBACK_DISABLE_AFTER"
	EnvTimeout       = "HERALD_CALLBACK_TIMEOUT"
	EnvConcurrency   = "HERALD_CALLBACK_CONCURRENCY"
)

// Defaults and bounds of Config.
const (
	// defaultDisableAfter is Svix's: an endpoint is disabled once it has
	// failed without a success for five days. Every event is given up on
	// after its own schedule (about 27.6 h by default) anyway; disabling
	// stops the stream of new events that would each fail through its
	// whole schedule. Five days outlast a long weekend or a holiday with
	// nobody on call (Friday evening to Tuesday morning is 3.5 days), so a
	// receiver that breaks then is not cut off before someone can look.
	defaultDisableAfter = 5 * 24 * time.Hour
	// defaultConcurrency is how many callbacks one worker posts at once. An
	// attempt holds its place for at most the timeout, so a receiver that
	// hangs costs a worker at most concurrency/timeout attempts a second;
	// Telegram's 30 messages a second per bot are covered by a few
	// workers even then.
	defaultConcurrency = 32

	maxScheduleWaits = 20
	maxScheduleWait  = 24 * time.Hour
	maxDisableAfter  = 90 * 24 * time.Hour
	maxTimeout       = time.Minute
	maxConcurrency   = 1024
)

// Config holds the status callbacks' settings (docs/STATUS.md).
type Config struct {
	// Secret is the master key the endpoints' signing secrets are derived
	// from (HERALD_CALLBACK_SECRET): "whsec_" and the base64 of 24 to 64
	// random bytes. Unset (and no SecretFile), callbacks are off.
	Secret string
	// SecretFile names a file holding the master key
	// (HERALD_CALLBACK_SECRET_FILE); it excludes Secret.
	SecretFile string
	// Allow lists the hosts, addresses and CIDRs that callbacks may reach
	// although they are loopback, link-local or private
	// (HERALD_CALLBACK_ALLOW); plain http:// is accepted for them alone.
	// An entry without a port permits the scheme's default port only
	// (ParseAllowList).
	Allow []string
	// Schedule is the waits between attempts after the first
	// (HERALD_CALLBACK_RETRY_SCHEDULE; default DefaultSchedule).
	Schedule Schedule
	// DisableAfter is how long an endpoint may fail without a success
	// before it is disabled (HERALD_CALLBACK_DISABLE_AFTER; default 5
	// days).
	DisableAfter time.Duration
	// Timeout bounds one attempt (HERALD_CALLBACK_TIMEOUT; default
	// defaultTimeout, 15 s).
	Timeout time.Duration
	// Concurrency is how many callbacks one worker posts at once
	// (HERALD_CALLBACK_CONCURRENCY; default 32).
	Concurrency int
}

// WithDefaults returns c with its zero settings at their defaults.
func (c Config) WithDefaults() Config {
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule()
	}
	if c.DisableAfter == 0 {
		c.DisableAfter = defaultDisableAfter
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Concurrency == 0 {
		c.Concurrency = defaultConcurrency
	}
	return c
}

// SharedSpecs binds the settings both binaries read, the secret and the
// allow-list, to c: the producer's settings take these alone, the
// worker's all of Specs.
func (c *Config) SharedSpecs() []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvSecret, "Master key of the status callbacks: whsec_ and the base64 of 24 to 64 random bytes "+
			"(echo whsec_$(openssl rand -base64 32)); each endpoint's signing secret is derived from it. "+
			"Unset, callbacks are off and a callback_url is refused. Producers and workers need the same.",
			config.StringVar(&c.Secret)),
		config.NewSpec(EnvSecretFile, "", "File holding the callbacks' master key.", config.StringVar(&c.SecretFile)),
		config.NewSpec(EnvAllow, "", "Hosts, addresses and CIDRs, separated by commas, that callbacks may reach although they are "+
			"loopback, link-local or private (127.0.0.1, 10.0.0.0/8, hooks.internal:9000); plain http:// is accepted for these alone. "+
			"An address or a name permits the port it names, every port with :* (10.0.0.5:*), and without a port only the "+
			"URL scheme's default (443 for https, 80 for http); a CIDR permits every port. "+
			"Producers and workers need the same.", allowVar(&c.Allow)),
	}
}

// Specs binds every callback setting to c, in documentation order: the
// shared ones, then the delivery's.
func (c *Config) Specs() []config.Spec {
	return append(c.SharedSpecs(),
		config.NewSpec(EnvRetrySchedule, DefaultSchedule().String(), "Waits between the attempts of one callback after the first, "+
			"which is immediate, separated by commas (the default is Svix's); an event whose last attempt fails is archived.",
			scheduleVar(&c.Schedule)),
		config.NewSpec(EnvDisableAfter, config.FmtDur(defaultDisableAfter), "An endpoint that fails for longer than this without a "+
			"success is disabled (one log line, a metric); its later events are archived at once until it is enabled again.",
			config.DurationVar(&c.DisableAfter)),
		config.NewSpec(EnvTimeout, config.FmtDur(defaultTimeout), "Longest time one callback attempt takes, connect to the end of the answer.",
			config.DurationVar(&c.Timeout)),
		config.NewSpec(EnvConcurrency, strconv.Itoa(defaultConcurrency), "Callbacks one worker posts at the same time, "+
			"apart from the Telegram sends (HERALD_CONCURRENCY).", config.IntVar(&c.Concurrency)),
	)
}

// CheckShared records the problems of the settings of SharedSpecs (the
// producer's), naming the setting and the fix.
func (c Config) CheckShared(p *config.Problems) {
	config.ValidateSecretPair(p, c.Secret, c.SecretFile, EnvSecret, EnvSecretFile)
	if v, err := config.SecretPair(c.Secret, c.SecretFile, EnvSecret, EnvSecretFile); err == nil && v != "" {
		if _, err := DecodeSecret(v); err != nil {
			p.Add(EnvSecret, "%v; generate one with: echo whsec_$(openssl rand -base64 32)", err)
		}
	}
	if _, err := ParseAllowList(c.Allow); err != nil {
		p.Add(EnvAllow, "%v", err)
	}
}

// Check records every problem of the callback settings (the worker's),
// naming the setting and the fix; c must have its defaults filled.
func (c Config) Check(p *config.Problems) {
	c.CheckShared(p)
	c.checkSchedule(p)
	if c.DisableAfter <= 0 || c.DisableAfter > maxDisableAfter {
		p.Add(EnvDisableAfter, "must be above 0 and at most %s (e.g. %s), got %s",
			config.FmtDur(maxDisableAfter), config.FmtDur(defaultDisableAfter), config.FmtDur(c.DisableAfter))
	}
	if c.Timeout <= 0 || c.Timeout > maxTimeout {
		p.Add(EnvTimeout, "must be above 0 and at most %s (e.g. %s), got %s",
			config.FmtDur(maxTimeout), config.FmtDur(defaultTimeout), config.FmtDur(c.Timeout))
	}
	if c.Concurrency < 1 || c.Concurrency > maxConcurrency {
		p.Add(EnvConcurrency, "must be between 1 and %d, got %d", maxConcurrency, c.Concurrency)
	}
}

// checkSchedule records a schedule that is empty, too long, or has a wait
// out of bounds.
func (c Config) checkSchedule(p *config.Problems) {
	if len(c.Schedule) == 0 || len(c.Schedule) > maxScheduleWaits {
		p.Add(EnvRetrySchedule, "must list 1 to %d waits, e.g. %q, got %d", maxScheduleWaits, DefaultSchedule().String(), len(c.Schedule))
	}
	for _, d := range c.Schedule {
		if d <= 0 || d > maxScheduleWait {
			p.Add(EnvRetrySchedule, "has the wait %s; each must be above 0 and at most %s", config.FmtDur(d), config.FmtDur(maxScheduleWait))
		}
	}
}

// Enabled reports whether a master key is set (or a file named for it):
// callbacks are on.
func (c Config) Enabled() bool { return c.Secret != "" || c.SecretFile != "" }

// master returns the master key's bytes, reading SecretFile when set; nil
// when callbacks are off. Errors name the setting, never the key.
func (c Config) master() ([]byte, error) {
	v, err := config.SecretPair(c.Secret, c.SecretFile, EnvSecret, EnvSecretFile)
	if err != nil || v == "" {
		return nil, err
	}
	key, err := DecodeSecret(v)
	if err != nil {
		return nil, config.FieldErr(EnvSecret, "%v", err)
	}
	return key, nil
}

// policy is what callback URLs may point at under these settings.
func (c Config) policy() (Policy, error) {
	allow, err := ParseAllowList(c.Allow)
	if err != nil {
		return Policy{}, config.FieldErr(EnvAllow, "%v", err)
	}
	return Policy{Allow: allow}, nil
}

// allowVar binds a list separated by commas, blanks dropped.
func allowVar(p *[]string) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			var list []string
			for item := range strings.SplitSeq(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					list = append(list, item)
				}
			}
			*p = list
			return nil
		},
		Get: func() string { return strings.Join(*p, ",") },
	}
}

// scheduleVar binds a retry schedule (parseSchedule).
func scheduleVar(p *Schedule) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			sch, err := parseSchedule(s)
			if err != nil {
				return err
			}
			*p = sch
			return nil
		},
		Get: func() string { return p.String() },
	}
}
