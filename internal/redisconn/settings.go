package redisconn

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// EnvURL names the Redis connection URL variable shared by both binaries.
const EnvURL = "REDIS_URL"

// Durable acknowledgement settings (both binaries).
const (
	EnvWaitReplicas = "HERALD_REDIS_WAIT_REPLICAS"
	envWaitTimeout  = "HERALD_REDIS_WAIT_TIMEOUT"
)

// Specs binds REDIS_URL, HERALD_REDIS_WAIT_REPLICAS and
// HERALD_REDIS_WAIT_TIMEOUT to c's fields. The URL is shown redacted.
func (c *Config) Specs() []config.Spec {
	url := config.NewSpec(EnvURL, defaultURL,
		"Redis holding the queues: redis://[user:pass@]host:port/db, rediss:// for TLS, "+
			"redis-sentinel://[:pass@]host1:port,host2:port/db?master=NAME, redis-cluster://[user:pass@]host1:port,host2:port "+
			"(rediss-cluster:// for TLS), or redis-socket:///path/to/redis.sock",
		config.StringVar(&c.URL))
	url.Show = redactURL
	return []config.Spec{
		url,
		config.NewSpec(EnvWaitReplicas, "auto",
			"Replicas that must hold a write before it is acknowledged (Redis WAIT on each node written to): "+
				"auto (1 where the node has a replica online, else none), 0 (never wait) or a number.",
			waitReplicasVar(&c.WaitReplicas)),
		config.NewSpec(envWaitTimeout, config.FmtDur(defaultWaitTimeout),
			"Longest wait for those replicas; a write not confirmed in time gets 503 (producer) or a retry (worker). "+
				"At most "+config.FmtDur(maxWaitTimeout)+".",
			config.DurationVar(&c.WaitTimeout)),
	}
}

// waitReplicasVar binds HERALD_REDIS_WAIT_REPLICAS: "auto", "0" (or "off")
// or a replica count.
func waitReplicasVar(p *int) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			switch strings.ToLower(s) {
			case "auto":
				*p = waitAuto
				return nil
			case "0", config.OffWord:
				*p = waitOff
				return nil
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return errors.New("must be auto, 0 (never wait) or a number of replicas such as 1")
			}
			*p = n
			return nil
		},
		Get: func() string {
			switch *p {
			case waitAuto:
				return "auto"
			case waitOff:
				return "0"
			}
			return strconv.Itoa(*p)
		},
	}
}

// Check records a problem when the URL cannot be used or a wait setting is
// out of range. NewClient, ConnOpt and UniversalOptions refuse a bad URL
// with the same error.
func (c Config) Check(p *config.Problems) {
	if _, err := c.parse(); err != nil {
		*p = append(*p, err)
	}
	if c.WaitReplicas < waitOff || c.WaitReplicas > maxWaitReplicas {
		p.Add(EnvWaitReplicas, "is %d; use auto, 0 (never wait) or a number of replicas from 1 to %d", c.WaitReplicas, maxWaitReplicas)
	}
	if c.WaitTimeout < 0 || c.WaitTimeout > maxWaitTimeout {
		p.Add(envWaitTimeout, "is %v; use a duration from 1ms to %v such as %v (the producer holds each request that long at worst)",
			c.WaitTimeout, maxWaitTimeout, defaultWaitTimeout)
	} else if c.WaitTimeout > 0 && c.WaitTimeout < time.Millisecond {
		p.Add(envWaitTimeout, "is %v; Redis WAIT counts whole milliseconds: use at least 1ms, such as %v", c.WaitTimeout, defaultWaitTimeout)
	}
}
