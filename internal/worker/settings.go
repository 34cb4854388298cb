package worker

import (
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/config"
)

// The settings of Config that a worker process reads (HERALD_QUEUES, the
// limits and the digests are declared by the settings package, ratelimit
// and digest).
const (
	EnvRetryAfterUnit  = "TELEGRAM_RETRY_AFTER_UNIT"
	EnvConcurrency     = "HERALD_CONCURRENCY"
	EnvWaiters         = "HERALD_WAITERS"
	EnvWaitLong        = "HERALD_WAIT_LONG"
	EnvStrictPriority  = "HERALD_STRICT_PRIORITY"
	EnvShutdownTimeout = "HERALD_SHUTDOWN_TIMEOUT"
	EnvBackoffBase     = "HERALD_BACKOFF_BASE"
	EnvBackoffCap      = "HERALD_BACKOFF_CAP"
	EnvSentRetention   = "HERALD_SENT_RETENTION"
	EnvLeaseRecovery   = "HERALD_LEASE_RECOVERY_AFTER"
	EnvMaxIdle         = "HERALD_MAX_IDLE"
)

// maxWaitLong is the longest WaitLong accepted: a waiter is a goroutine
// that holds a place of the asynq server for the whole wait.
const maxWaitLong = time.Hour

// Bounds of MaxIdle: an idle worker looks at each queue once per MaxIdle
// (one LLEN a queue), so the floor bounds that cost; the ceiling bounds how
// late a task that came without news (the web UI's "run", a plain asynq
// client) is seen.
const (
	minMaxIdle = 100 * time.Millisecond
	maxMaxIdle = 10 * time.Minute
)

// Specs binds the worker's own settings to c's fields, in documentation
// order.
func (c *Config) Specs() []config.Spec {
	return append([]config.Spec{
		config.NewSpec(EnvRetryAfterUnit, config.FmtDur(defaultRetryAfterUnit), "Length of one second of a 429's retry_after; change it only for a fake Bot API that runs Telegram's clock faster.",
			config.DurationVar(&c.RetryAfterUnit)),
		config.NewSpec(EnvConcurrency, strconv.Itoa(defaultConcurrency), "Number of tasks processed at the same time.", config.IntVar(&c.Concurrency)),
		config.NewSpec(EnvWaiters, strconv.Itoa(defaultWaiters), "Further tasks that may wait for their send slot in memory (a sleeping goroutine each) instead of a round trip through Redis; -1 for none.",
			config.IntVar(&c.Waiters)),
		config.NewSpec(EnvWaitLong, config.FmtDur(defaultWaitLong), "Longest wait a task sleeps through in memory; longer waits go back to Redis.", config.DurationVar(&c.WaitLong)),
		config.NewSpec(EnvStrictPriority, "false", "Empty higher-priority queues first instead of weighting them.",
			config.BoolVar(&c.StrictPriority)),
		config.NewSpec(EnvShutdownTimeout, config.FmtDur(broker.DefaultShutdownTimeout), "Time running tasks get to finish on shutdown.", config.DurationVar(&c.ShutdownTimeout)),
		config.NewSpec(EnvBackoffBase, config.FmtDur(defaultBackoffBase), "Longest first wait after a 5xx or transport error; doubles per retry.",
			config.DurationVar(&c.BackoffBase)),
		config.NewSpec(EnvBackoffCap, config.FmtDur(defaultBackoffCap), "Upper bound of any retry wait.", config.DurationVar(&c.BackoffCap)),
		config.NewSpec(EnvSentRetention, config.FmtDur(defaultSentRetention), `How long the progress record of a message with parts still to send is kept, so a retry does not send a part twice; a delivered message's record is kept at most an hour (until no redelivery can come).`,
			config.DurationVar(&c.SentRetention)),
		config.NewSpec(EnvLeaseRecovery, config.FmtDur(broker.DefaultLeaseRecoveryAfter), "Hand a task to another worker when its lease went this long without extension (crashed worker); -1s leaves it to asynq (60-90s).",
			config.DurationVar(&c.LeaseRecoveryAfter)),
		config.NewSpec(EnvMaxIdle, config.FmtDur(broker.DefaultMaxIdle), `Longest time an idle worker goes without looking at its queues (one LLEN each); new messages wake it at once, so this bounds only tasks made ready without news (the web UI's "run", plain asynq clients).`,
			config.DurationVar(&c.MaxIdle)),
	}, paidSpecs(&c.Paid)...)
}

// Check records every one of the worker's own settings that is out of
// bounds, naming it and the fix; New reports the same problems. c must have
// its defaults filled.
func (c Config) Check(p *config.Problems) {
	if c.RetryAfterUnit <= 0 || c.RetryAfterUnit > defaultRetryAfterUnit {
		p.Add(EnvRetryAfterUnit, "must be above 0 and at most %s (Telegram's own; less only for a time-scaled fake), got %s",
			config.FmtDur(defaultRetryAfterUnit), config.FmtDur(c.RetryAfterUnit))
	}
	if c.Concurrency < 1 {
		p.Add(EnvConcurrency, "must be >= 1, got %d", c.Concurrency)
	}
	if c.Waiters < -1 {
		p.Add(EnvWaiters, "must be -1 (none) or more, got %d", c.Waiters)
	}
	if c.WaitLong < 0 || c.WaitLong > maxWaitLong {
		p.Add(EnvWaitLong, "must be between 0 and %s (e.g. %s), got %s", config.FmtDur(maxWaitLong), config.FmtDur(defaultWaitLong), config.FmtDur(c.WaitLong))
	}
	p.Positive(EnvShutdownTimeout, c.ShutdownTimeout, broker.DefaultShutdownTimeout)
	p.Positive(EnvBackoffBase, c.BackoffBase, defaultBackoffBase)
	p.Positive(EnvBackoffCap, c.BackoffCap, defaultBackoffCap)
	if c.BackoffBase > 0 && c.BackoffCap > 0 && c.BackoffBase > c.BackoffCap {
		p.Add(EnvBackoffBase, "is %s, above %s which is %s; lower the base or raise the cap",
			config.FmtDur(c.BackoffBase), config.Ref(EnvBackoffCap), config.FmtDur(c.BackoffCap))
	}
	p.AtLeastSecond(EnvSentRetention, c.SentRetention, defaultSentRetention)
	if c.MaxIdle < minMaxIdle || c.MaxIdle > maxMaxIdle {
		p.Add(EnvMaxIdle, "must be between %s and %s (e.g. %s), got %s", config.FmtDur(minMaxIdle), config.FmtDur(maxMaxIdle),
			config.FmtDur(broker.DefaultMaxIdle), config.FmtDur(c.MaxIdle))
	}
	if err := broker.CheckLeaseRecovery(c.LeaseRecoveryAfter); err != nil {
		p.Add(EnvLeaseRecovery, "%v", err)
	}
	c.Paid.Check(p, DefaultPaidNames(), c.RetryAfterUnit, c.Limits.EffectiveGuard())
}
