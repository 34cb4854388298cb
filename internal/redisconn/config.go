package redisconn

import (
	"log/slog"
	"time"

	"github.com/herald-dev/herald/internal/durable"
)

// Config says where Herald's queues live.
//
// URL (REDIS_URL) takes one of the forms the package documentation lists.
// For sentinel URLs the password in the user part authenticates against the
// sentinels, as in asynq; the optional username and password query
// parameters authenticate against the master.
//
// WaitReplicas and WaitTimeout (HERALD_REDIS_WAIT_REPLICAS,
// HERALD_REDIS_WAIT_TIMEOUT) make an acknowledgement durable: before the
// producer answers 2xx, and before a worker counts a send as recorded,
// Herald waits until that many replicas of each node written to hold the
// write (Redis WAIT). See internal/durable.
type Config struct {
	// URL is the Redis URL (REDIS_URL, default [DefaultURL]).
	URL string
	// WaitReplicas is WaitAuto (the zero value, the default), WaitOff, or
	// the number of replicas (1 or more) every acknowledged write must
	// reach.
	WaitReplicas int
	// WaitTimeout bounds one wait; a write not confirmed in time is
	// answered 503 (producer) or retried (worker). Zero means
	// [DefaultWaitTimeout].
	WaitTimeout time.Duration
}

// defaultURL is the Redis URL used when REDIS_URL is not set.
const defaultURL = "redis://127.0.0.1:6379/0"

// Values of Config.WaitReplicas besides a replica count.
const (
	// waitAuto waits for one replica on every node that has one online
	// (INFO replication, re-read at most once a second per node), and not
	// at all on a node without replicas.
	waitAuto = 0
	// waitOff never waits: a 2xx means the master took the write.
	waitOff = -1
)

// Bounds of HERALD_REDIS_WAIT_TIMEOUT.
const (
	// defaultWaitTimeout is the wait timeout when none is set.
	defaultWaitTimeout = time.Second
	// maxWaitTimeout is the longest wait timeout Check accepts.
	maxWaitTimeout = 10 * time.Second
	// maxWaitReplicas is a sanity bound: no deployment has more.
	maxWaitReplicas = 64
)

// WithDefaults returns c with an empty URL and a zero wait timeout
// replaced by their defaults.
func (c Config) WithDefaults() Config {
	if c.URL == "" {
		c.URL = defaultURL
	}
	if c.WaitTimeout == 0 {
		c.WaitTimeout = defaultWaitTimeout
	}
	return c
}

// Durable returns the acknowledgement the wait settings ask for, for
// durable.New: the replica count (0 with auto or off), whether it is
// chosen per node (auto) and the timeout (its default when zero).
func (c Config) Durable() durable.Config {
	c = c.WithDefaults()
	switch {
	case c.WaitReplicas == waitAuto:
		return durable.Config{Auto: true, Timeout: c.WaitTimeout}
	case c.WaitReplicas < 0:
		return durable.Config{Timeout: c.WaitTimeout}
	}
	return durable.Config{Replicas: c.WaitReplicas, Timeout: c.WaitTimeout}
}

// String returns the URL with passwords masked; see Redacted.
func (c Config) String() string { return c.Redacted() }

// LogValue logs the redacted URL, so slog never prints the password.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.Redacted()) }
