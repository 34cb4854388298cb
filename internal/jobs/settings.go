package jobs

import (
	"strconv"

	"github.com/herald-dev/herald/internal/config"
)

// The enqueue policy's settings (HERALD_QUEUES, shared with the worker,
// stays with the binaries' settings).
const (
	EnvDefaultQueue      = "HERALD_DEFAULT_QUEUE"
	EnvMaxRetry          = "HERALD_MAX_RETRY"
	EnvTaskTimeout       = "HERALD_TASK_TIMEOUT"
	EnvIdempotencyWindow = "HERALD_IDEMPOTENCY_WINDOW"
	EnvMaxTextLen        = "HERALD_MAX_TEXT_LEN"
)

// DefaultQueueSpec binds HERALD_DEFAULT_QUEUE to c; queuesEnv names the
// setting that lists the queues, which must hold it.
func (c *EnqueueConfig) DefaultQueueSpec(queuesEnv string) config.Spec {
	return config.NewSpec(EnvDefaultQueue, QueueDefault, "Queue for messages that name none; must be listed in "+queuesEnv+".",
		config.StringVar(&c.DefaultQueue))
}

// PolicySpecs binds the retry budget, the timeout, the idempotency window
// and the text limit to c, in documentation order.
func (c *EnqueueConfig) PolicySpecs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvMaxRetry, strconv.Itoa(DefaultMaxRetry), "Retries of a task before it is archived.", config.IntVar(&c.MaxRetry)),
		config.NewSpec(EnvTaskTimeout, config.FmtDur(DefaultTaskTimeout), "Timeout of one processing attempt of a task.", config.DurationVar(&c.Timeout)),
		config.NewSpec(EnvIdempotencyWindow, config.FmtDur(DefaultIdempotencyWindow), "How long an idempotency key rejects duplicates.",
			config.DurationVar(&c.IdempotencyWindow)),
		config.NewSpec(EnvMaxTextLen, strconv.Itoa(DefaultMaxTextLen), "Longest accepted text in UTF-16 units; the worker splits it into 4096-unit messages.",
			config.IntVar(&c.Limits.MaxTextLen)),
	}
}

// Specs binds every enqueue policy setting to c.
func (c *EnqueueConfig) Specs() []config.Spec {
	return append([]config.Spec{c.DefaultQueueSpec("HERALD_QUEUES")}, c.PolicySpecs()...)
}

// Check reports every problem of the enqueue policy's settings by their
// names. That DefaultQueue is one of the queues is the binaries' rule, as
// the queues are their setting.
func (c EnqueueConfig) Check(p *config.Problems) {
	if c.MaxRetry < 0 {
		p.Add(EnvMaxRetry, "must be >= 0, got %d", c.MaxRetry)
	}
	p.AtLeastSecond(EnvTaskTimeout, c.Timeout, DefaultTaskTimeout)
	p.AtLeastSecond(EnvIdempotencyWindow, c.IdempotencyWindow, DefaultIdempotencyWindow)
	if c.Limits.MaxTextLen < 1 {
		p.Add(EnvMaxTextLen, "must be >= 1, got %d", c.Limits.MaxTextLen)
	}
}
