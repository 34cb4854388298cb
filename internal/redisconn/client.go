package redisconn

import (
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// ConnOpt returns the asynq connection option for URL: a RedisClientOpt for
// redis://, rediss:// and redis-socket://, or a RedisFailoverClientOpt for
// redis-sentinel://. The error names REDIS_URL and never contains a password.
func (c Config) ConnOpt() (asynq.RedisConnOpt, error) {
	t, err := c.parse()
	if err != nil {
		return nil, err
	}
	if t.cluster {
		return asynq.RedisClusterClientOpt{
			Addrs:     slices.Clone(t.addrs),
			Username:  t.username,
			Password:  t.password,
			TLSConfig: t.tlsConfig(),
		}, nil
	}
	if t.master != "" {
		return asynq.RedisFailoverClientOpt{
			MasterName:       t.master,
			SentinelAddrs:    slices.Clone(t.addrs),
			SentinelUsername: t.sentinelUsername,
			SentinelPassword: t.sentinelPassword,
			Username:         t.username,
			Password:         t.password,
			DB:               t.db,
			TLSConfig:        t.tlsConfig(),
		}, nil
	}
	return asynq.RedisClientOpt{
		Network:   t.network,
		Addr:      t.addrs[0],
		Username:  t.username,
		Password:  t.password,
		DB:        t.db,
		TLSConfig: t.tlsConfig(),
	}, nil
}

// UniversalOptions returns go-redis options that reach the same server, with
// the same credentials and database, as ConnOpt. Pass them to
// redis.NewUniversalClient.
func (c Config) UniversalOptions() (*redis.UniversalOptions, error) {
	t, err := c.parse()
	if err != nil {
		return nil, err
	}
	return t.universalOptions(), nil
}

// universalOptions builds the go-redis options of t.
func (t target) universalOptions() *redis.UniversalOptions {
	// go-redis picks the unix network by itself for an absolute path.
	return &redis.UniversalOptions{
		Addrs:            slices.Clone(t.addrs),
		MasterName:       t.master,
		Username:         t.username,
		Password:         t.password,
		SentinelUsername: t.sentinelUsername,
		SentinelPassword: t.sentinelPassword,
		DB:               t.db,
		TLSConfig:        t.tlsConfig(),
		IsClusterMode:    t.cluster,
	}
}

// ClientOptions tune the clients NewClient builds.
type ClientOptions struct {
	// FailFast gives up at once when Redis refuses connections or a
	// command fails: no command retries, one dial attempt of at most a
	// second. The producer uses it so that a request gets its 503 (with
	// Retry-After) in milliseconds and the sender retries with its own
	// backoff, instead of waiting through go-redis's retries.
	FailFast bool
}

// sentinelDialTimeout bounds one dial of a Sentinel client, fail-fast or
// not: a master on the sentinels' network accepts a connection in
// milliseconds, and a dial that fails is tried again (go-redis's dial
// retries, then its probe once a second).
const sentinelDialTimeout = 500 * time.Millisecond

// NewClient returns the go-redis client Herald uses for URL: a
// *redis.Client for redis://, rediss:// and redis-socket://, a failover
// *redis.Client for redis-sentinel:// and a *redis.ClusterClient for
// redis-cluster://. Unlike redis.NewUniversalClient(UniversalOptions()), it
// recovers from a failover by itself:
//
//   - a cluster client reloads its slot map every ClusterReloadInterval
//     while in use, and at once when a node refuses a connection, drops it,
//     or answers READONLY, CLUSTERDOWN or MASTERDOWN (go-redis alone waits
//     up to a minute after a master dies);
//   - a Sentinel client asks the sentinels for the master at every new
//     connection and drops a connection that answers READONLY (go-redis
//     does both), so a demoted master is left at the next command;
//   - the read timeout exceeds the wait timeout, so a WAIT is never cut
//     short by the socket deadline;
//   - a Sentinel client dials for at most sentinelDialTimeout: once enough
//     dials to a dead master failed, go-redis stops dialing and probes
//     once a second, each probe waiting out the dial timeout, so after the
//     sentinels name the new master the client reaches it within about
//     the dial timeout plus a second (go-redis's default, 5 s, made a
//     worker deliver again up to 6 s after the switch, the producer's
//     1 s made it answer 202 again up to 2.5 s after it).
//
// The caller closes the client.
func (c Config) NewClient(o ClientOptions) (redis.UniversalClient, error) {
	t, err := c.parse()
	if err != nil {
		return nil, err
	}
	opts := t.universalOptions()
	opts.ReadTimeout = max(3*time.Second, c.Durable().Timeout+time.Second)
	if o.FailFast {
		opts.MaxRetries = -1
		opts.DialerRetries = 1
		opts.DialTimeout = time.Second
	}
	if t.master != "" {
		opts.DialTimeout = sentinelDialTimeout
	}
	if !t.cluster {
		return redis.NewUniversalClient(opts), nil
	}
	co := opts.Cluster()
	co.ClusterStateReloadInterval = clusterReloadInterval
	cc := redis.NewClusterClient(co)
	cc.AddHook(reloadOnFailure{c: cc})
	// Dials happen on the node clients, below the cluster's own hooks.
	cc.OnNewNode(func(node *redis.Client) { node.AddHook(reloadOnDialFailure{c: cc}) })
	return cc, nil
}

// AsynqConnOpt returns an asynq.RedisConnOpt whose MakeRedisClient builds
// its client with NewClient(o), for the asynq clients Herald does not
// build itself (asynq.NewInspector, the web UI), so that they follow a
// failover as quickly as Herald's own. The error is ConnOpt's.
func (c Config) AsynqConnOpt(o ClientOptions) (asynq.RedisConnOpt, error) {
	if _, err := c.parse(); err != nil {
		return nil, err
	}
	return clientConnOpt{cfg: c, o: o}, nil
}

// clientConnOpt is the asynq.RedisConnOpt of AsynqConnOpt.
type clientConnOpt struct {
	cfg Config
	o   ClientOptions
}

// MakeRedisClient implements asynq.RedisConnOpt. The URL was checked by
// AsynqConnOpt, so NewClient cannot fail here; should it, the nil it
// returns makes asynq panic with the type, as for any unusable option.
func (c clientConnOpt) MakeRedisClient() any {
	rdb, err := c.cfg.NewClient(c.o)
	if err != nil {
		return nil
	}
	return rdb
}

// String keeps the password out of anything that prints the option.
func (c clientConnOpt) String() string { return c.cfg.Redacted() }
