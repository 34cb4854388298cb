package settings

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// EnvRedisURL names the Redis connection URL variable shared by both binaries.
const EnvRedisURL = "REDIS_URL"

// DefaultRedisURL is the Redis URL used when REDIS_URL is not set.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// redisForms lists the accepted URL shapes for error messages.
const redisForms = "redis://[user:pass@]host:port/db, rediss://[user:pass@]host:port/db (TLS), " +
	"redis-sentinel://[:pass@]host1:port,host2:port/db?master=NAME, redis-cluster://[user:pass@]host1:port,host2:port " +
	"(rediss-cluster:// for TLS) or redis-socket:///path/to/redis.sock?db=N"

// redactedMark replaces secrets in rendered URLs.
const redactedMark = "xxxxx"

// Redis says where Herald's queues live.
//
// URL (REDIS_URL) takes one of these forms:
//
//	redis://[user:pass@]host[:port][/db]             plain TCP, port 6379 by default
//	rediss://[user:pass@]host[:port][/db]            TCP with TLS
//	redis-sentinel://[:pass@]host1:port,host2:port[/db]?master=NAME[&username=U&password=P]
//	redis-socket://[:pass@]/path/to/redis.sock[?db=N]
//	redis-cluster://[user:pass@]host1:port,host2:port  Redis Cluster seed nodes (rediss-cluster:// for TLS)
//
// For sentinel URLs the password in the user part authenticates against the
// sentinels, as in asynq; the optional username and password query parameters
// authenticate against the master.
//
// WaitReplicas and WaitTimeout (HERALD_REDIS_WAIT_REPLICAS,
// HERALD_REDIS_WAIT_TIMEOUT) make an acknowledgement durable: before the
// producer answers 2xx, and before a worker counts a send as recorded,
// Herald waits until that many replicas of each node written to hold the
// write (Redis WAIT). See internal/durable.
type Redis struct {
	URL string
	// WaitReplicas is WaitAuto (the zero value, the default), WaitOff, or
	// the number of replicas (1 or more) every acknowledged write must
	// reach.
	WaitReplicas int
	// WaitTimeout bounds one wait; a write not confirmed in time is
	// answered 503 (producer) or retried (worker). Zero means the default.
	WaitTimeout time.Duration
}

// Durable acknowledgement settings (both binaries).
const (
	EnvRedisWaitReplicas = "HERALD_REDIS_WAIT_REPLICAS"
	EnvRedisWaitTimeout  = "HERALD_REDIS_WAIT_TIMEOUT"
)

// Values of Redis.WaitReplicas besides a replica count.
const (
	// WaitAuto waits for one replica on every node that has one online
	// (INFO replication, re-read at most once a second per node), and not
	// at all on a node without replicas.
	WaitAuto = 0
	// WaitOff never waits: a 2xx means the master took the write.
	WaitOff = -1
)

// Bounds of HERALD_REDIS_WAIT_TIMEOUT.
const (
	DefaultRedisWaitTimeout = time.Second
	MaxRedisWaitTimeout     = 10 * time.Second
	// maxWaitReplicas is a sanity bound: no deployment has more.
	maxWaitReplicas = 64
)

// ClusterReloadInterval is how often a cluster client Herald builds
// reloads the slot map while it is in use (go-redis's default is a
// minute); a refused connection or READONLY reloads it at once.
const ClusterReloadInterval = time.Second

// redisSpecs are the Redis settings both binaries read.
func redisSpecs(r *Redis) []config.Spec {
	redisURL := config.NewSpec(EnvRedisURL, DefaultRedisURL,
		"Redis holding the queues: redis://[user:pass@]host:port/db, rediss:// for TLS, "+
			"redis-sentinel://[:pass@]host1:port,host2:port/db?master=NAME, redis-cluster://[user:pass@]host1:port,host2:port "+
			"(rediss-cluster:// for TLS), or redis-socket:///path/to/redis.sock",
		config.StringVar(&r.URL))
	redisURL.Show = redactURL
	return []config.Spec{
		redisURL,
		config.NewSpec(EnvRedisWaitReplicas, "auto",
			"Replicas that must hold a write before it is acknowledged (Redis WAIT on each node written to): "+
				"auto (1 where the node has a replica online, else none), 0 (never wait) or a number.",
			waitReplicasVar(&r.WaitReplicas)),
		config.NewSpec(EnvRedisWaitTimeout, config.FmtDur(DefaultRedisWaitTimeout),
			"Longest wait for those replicas; a write not confirmed in time gets 503 (producer) or a retry (worker). At most 10s.",
			config.DurationVar(&r.WaitTimeout)),
	}
}

// waitReplicasVar binds HERALD_REDIS_WAIT_REPLICAS: "auto", "0" (or "off")
// or a replica count.
func waitReplicasVar(p *int) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			switch strings.ToLower(s) {
			case "auto":
				*p = WaitAuto
				return nil
			case "0", config.OffWord:
				*p = WaitOff
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
			case WaitAuto:
				return "auto"
			case WaitOff:
				return "0"
			}
			return strconv.Itoa(*p)
		},
	}
}

// Durability returns the wait settings: the replica count (0 with auto or
// off), whether it is chosen per node (auto) and the timeout.
func (r Redis) Durability() (replicas int, auto bool, timeout time.Duration) {
	timeout = r.WaitTimeout
	if timeout == 0 {
		timeout = DefaultRedisWaitTimeout
	}
	switch {
	case r.WaitReplicas == WaitAuto:
		return 0, true, timeout
	case r.WaitReplicas < 0:
		return 0, false, timeout
	}
	return r.WaitReplicas, false, timeout
}

// redisTarget is a parsed Redis URL from which both client option types are
// built, so Herald's own client and asynq always agree.
type redisTarget struct {
	network          string   // "tcp" or "unix"
	addrs            []string // one address, or the sentinel list
	username         string
	password         string
	sentinelUsername string
	sentinelPassword string
	master           string
	db               int
	tlsServerName    string // non-empty for rediss:// and rediss-cluster://
	cluster          bool   // Redis Cluster seed nodes in addrs
}

// String returns the URL with passwords masked; see Redacted.
func (r Redis) String() string { return r.Redacted() }

// LogValue logs the redacted URL, so slog never prints the password.
func (r Redis) LogValue() slog.Value { return slog.StringValue(r.Redacted()) }

// Redacted returns the URL with the user part and any password query
// parameter masked, so it is safe to log. Malformed URLs are masked too.
func (r Redis) Redacted() string { return redactURL(r.URL) }

// ConnOpt returns the asynq connection option for URL: a RedisClientOpt for
// redis://, rediss:// and redis-socket://, or a RedisFailoverClientOpt for
// redis-sentinel://. The error names REDIS_URL and never contains a password.
func (r Redis) ConnOpt() (asynq.RedisConnOpt, error) {
	t, err := r.target()
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
func (r Redis) UniversalOptions() (*redis.UniversalOptions, error) {
	t, err := r.target()
	if err != nil {
		return nil, err
	}
	return t.universalOptions(), nil
}

// universalOptions builds the go-redis options of t.
func (t redisTarget) universalOptions() *redis.UniversalOptions {
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

// tlsConfig returns a fresh TLS configuration for rediss://, or nil.
func (t redisTarget) tlsConfig() *tls.Config {
	if t.tlsServerName == "" {
		return nil
	}
	return &tls.Config{ServerName: t.tlsServerName, MinVersion: tls.VersionTLS12}
}

// target parses URL, wrapping any problem in a FieldError for REDIS_URL.
func (r Redis) target() (redisTarget, error) {
	t, err := parseRedisURL(r.URL)
	if err != nil {
		return redisTarget{}, config.FieldErr(EnvRedisURL, "%v", err)
	}
	return t, nil
}

// validate records a problem when URL cannot be used or a wait setting is
// out of range.
func (r Redis) validate(p *config.Problems) {
	if _, err := r.target(); err != nil {
		*p = append(*p, err)
	}
	if r.WaitReplicas < WaitOff || r.WaitReplicas > maxWaitReplicas {
		p.Add(EnvRedisWaitReplicas, "is %d; use auto, 0 (never wait) or a number of replicas from 1 to %d", r.WaitReplicas, maxWaitReplicas)
	}
	if r.WaitTimeout < 0 || r.WaitTimeout > MaxRedisWaitTimeout {
		p.Add(EnvRedisWaitTimeout, "is %v; use a duration from 1ms to %v such as %v (the producer holds each request that long at worst)",
			r.WaitTimeout, MaxRedisWaitTimeout, DefaultRedisWaitTimeout)
	} else if r.WaitTimeout > 0 && r.WaitTimeout < time.Millisecond {
		p.Add(EnvRedisWaitTimeout, "is %v; Redis WAIT counts whole milliseconds: use at least 1ms, such as %v", r.WaitTimeout, DefaultRedisWaitTimeout)
	}
}

// withDefaults fills an empty URL and a zero wait timeout.
func (r Redis) withDefaults() Redis {
	if r.URL == "" {
		r.URL = DefaultRedisURL
	}
	if r.WaitTimeout == 0 {
		r.WaitTimeout = DefaultRedisWaitTimeout
	}
	return r
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
//     short by the socket deadline.
//
// The caller closes the client.
func (r Redis) NewClient(o ClientOptions) (redis.UniversalClient, error) {
	t, err := r.target()
	if err != nil {
		return nil, err
	}
	opts := t.universalOptions()
	_, _, wait := r.Durability()
	opts.ReadTimeout = max(3*time.Second, wait+time.Second)
	if o.FailFast {
		opts.MaxRetries = -1
		opts.DialerRetries = 1
		opts.DialTimeout = time.Second
	}
	if !t.cluster {
		return redis.NewUniversalClient(opts), nil
	}
	co := opts.Cluster()
	co.ClusterStateReloadInterval = ClusterReloadInterval
	c := redis.NewClusterClient(co)
	c.AddHook(reloadOnFailure{c: c})
	// Dials happen on the node clients, below the cluster's own hooks.
	c.OnNewNode(func(node *redis.Client) { node.AddHook(reloadOnDialFailure{c: c}) })
	return c, nil
}

// AsynqConnOpt returns an asynq.RedisConnOpt whose MakeRedisClient builds
// its client with NewClient(o), for the asynq clients Herald does not
// build itself (asynq.NewInspector, the web UI), so that they follow a
// failover as quickly as Herald's own. The error is ConnOpt's.
func (r Redis) AsynqConnOpt(o ClientOptions) (asynq.RedisConnOpt, error) {
	if _, err := r.target(); err != nil {
		return nil, err
	}
	return clientConnOpt{r: r, o: o}, nil
}

// clientConnOpt is the asynq.RedisConnOpt of AsynqConnOpt.
type clientConnOpt struct {
	r Redis
	o ClientOptions
}

// MakeRedisClient implements asynq.RedisConnOpt. The URL was checked by
// AsynqConnOpt, so NewClient cannot fail here; should it, the nil it
// returns makes asynq panic with the type, as for any unusable option.
func (c clientConnOpt) MakeRedisClient() any {
	rdb, err := c.r.NewClient(c.o)
	if err != nil {
		return nil
	}
	return rdb
}

// String keeps the password out of anything that prints the option.
func (c clientConnOpt) String() string { return c.r.Redacted() }

// reloadOnFailure is a go-redis hook on a cluster client: a command or
// pipeline that failed because a node is gone or no longer a master asks
// for a slot map reload (go-redis coalesces them: at most one every 200ms).
type reloadOnFailure struct{ c *redis.ClusterClient }

func (h reloadOnFailure) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if topologyChanged(err) {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

func (h reloadOnFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		changed := topologyChanged(err)
		for _, cmd := range cmds {
			changed = changed || topologyChanged(cmd.Err())
		}
		if changed {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

// reloadOnDialFailure is the node-client half of reloadOnFailure: a node
// that refuses a connection may have died and been replaced.
type reloadOnDialFailure struct{ c *redis.ClusterClient }

func (h reloadOnDialFailure) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			h.c.ReloadState(ctx)
		}
		return conn, err
	}
}

func (reloadOnDialFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (reloadOnDialFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// topologyChanged reports errors after which a cluster's slot map may be
// stale: a node that refuses or drops connections, or answers that it is
// not (or no longer) a usable master. Redis errors about the command itself
// and redis.Nil are not.
func topologyChanged(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrClosed) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	msg := err.Error()
	for _, prefix := range []string{"READONLY", "CLUSTERDOWN", "MASTERDOWN", "LOADING"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// ReplicaHint says what to do when the server Herald writes to turns out
// to be a replica (READONLY, or ROLE answering "slave"), in the terms of
// URL's form. It holds no credentials.
func (r Redis) ReplicaHint() string {
	t, err := r.target()
	switch {
	case err != nil:
		return "fix " + EnvRedisURL
	case t.cluster:
		return "the cluster is failing over; Herald reloads the slot map every second"
	case t.master != "":
		return "the sentinels still name a replica as master " + strconv.Quote(t.master) + " (a failover is under way); Herald asks them again at each new connection"
	}
	return EnvRedisURL + " names one server, and that server is a replica (a failover demoted it, or the URL names a replica); " +
		"Herald writes only to the master: set " + EnvRedisURL + " to redis-sentinel://HOST1:26379,HOST2:26379,HOST3:26379/0?master=NAME " +
		"so that Herald follows failovers, or to the current master's address"
}

// parseRedisURL understands the four URL forms. Its errors show the URL only
// in redacted form and never wrap net/url errors, which quote the input.
func parseRedisURL(raw string) (redisTarget, error) {
	shown := redactURL(raw)
	if strings.TrimSpace(raw) == "" {
		return redisTarget{}, fmt.Errorf("is empty; use one of %s", redisForms)
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		hint := ""
		if !strings.ContainsAny(raw, "/?#") && strings.Contains(raw, ":") {
			hint = fmt.Sprintf(" (did you mean %q?)", "redis://"+shown+"/0")
		}
		return redisTarget{}, fmt.Errorf("%q has no scheme%s; use one of %s", shown, hint, redisForms)
	}
	switch strings.ToLower(scheme) {
	case "redis", "rediss":
		return parseRedisTCP(raw, strings.ToLower(scheme) == "rediss", shown)
	case "redis-sentinel":
		return parseRedisSentinel(rest, shown)
	case "redis-socket":
		return parseRedisSocket(raw, shown)
	case "redis-cluster", "rediss-cluster":
		return parseRedisCluster(rest, strings.ToLower(scheme) == "rediss-cluster", shown)
	default:
		return redisTarget{}, fmt.Errorf("%q has unsupported scheme %q; accepted schemes are redis://, rediss://, redis-sentinel://, redis-cluster://, rediss-cluster:// and redis-socket:// (%s)",
			shown, scheme, redisForms)
	}
}

// parseURL wraps url.Parse without leaking the input: the underlying reason
// is only shown when the URL carries no credentials.
func parseURL(raw, shown string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		reason := ""
		var ue *url.Error
		if !strings.Contains(raw, "@") && errors.As(err, &ue) {
			reason = ": " + ue.Err.Error()
		}
		return nil, fmt.Errorf("%q is not a valid URL%s; use one of %s", shown, reason, redisForms)
	}
	return u, nil
}

// parseRedisTCP handles redis:// and rediss://.
func parseRedisTCP(raw string, useTLS bool, shown string) (redisTarget, error) {
	u, err := parseURL(raw, shown)
	if err != nil {
		return redisTarget{}, err
	}
	if err := onlyQuery(u.Query(), shown); err != nil {
		return redisTarget{}, err
	}
	addr, err := hostPort(u.Host, "6379", shown)
	if err != nil {
		return redisTarget{}, err
	}
	db, err := pathDB(u.Path, shown)
	if err != nil {
		return redisTarget{}, err
	}
	t := redisTarget{network: "tcp", addrs: []string{addr}, db: db}
	t.username, t.password = userPass(u.User)
	if useTLS {
		t.tlsServerName = u.Hostname()
	}
	return t, nil
}

// splitHostList splits the part after "scheme://" of a URL with a
// comma-separated host list into its user info (with the trailing "@"), the
// hosts and the rest (path, query). It is done by hand because net/url does
// not accept a host list with IPv6 literals.
func splitHostList(rest string) (userinfo, hosts, tail string) {
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	hosts = authority
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo, hosts = authority[:at+1], authority[at+1:]
	}
	return userinfo, hosts, tail
}

// parseHostList parses "host[:port],host[:port]" with defPort for hosts
// that name none.
func parseHostList(hosts, defPort, shown string) ([]string, error) {
	var addrs []string
	for h := range strings.SplitSeq(hosts, ",") {
		addr, err := hostPort(strings.TrimSpace(h), defPort, shown)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// parseRedisCluster reads redis-cluster://[user:pass@]host1:port,host2:port:
// seed nodes of a Redis Cluster. A cluster has only database 0, so a path
// other than "" or "/0" is refused.
func parseRedisCluster(rest string, useTLS bool, shown string) (redisTarget, error) {
	userinfo, hosts, tail := splitHostList(rest)
	u, err := parseURL("redis-cluster://"+userinfo+"cluster"+tail, shown)
	if err != nil {
		return redisTarget{}, err
	}
	if err := onlyQuery(u.Query(), shown); err != nil {
		return redisTarget{}, err
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" && p != "0" {
		return redisTarget{}, fmt.Errorf("%q selects database %q; a Redis Cluster has only database 0", shown, p)
	}
	t := redisTarget{network: "tcp", cluster: true}
	t.username, t.password = userPass(u.User)
	if t.addrs, err = parseHostList(hosts, "6379", shown); err != nil {
		return redisTarget{}, err
	}
	if useTLS {
		t.tlsServerName, _, _ = net.SplitHostPort(t.addrs[0])
	}
	return t, nil
}

// parseRedisSentinel handles redis-sentinel://.
func parseRedisSentinel(rest, shown string) (redisTarget, error) {
	userinfo, hosts, tail := splitHostList(rest)
	u, err := parseURL("redis-sentinel://"+userinfo+"sentinel"+tail, shown)
	if err != nil {
		return redisTarget{}, err
	}
	q := u.Query()
	if err := onlyQuery(q, shown, "master", "username", "password"); err != nil {
		return redisTarget{}, err
	}
	t := redisTarget{network: "tcp", master: q.Get("master"), username: q.Get("username"), password: q.Get("password")}
	if t.master == "" {
		return redisTarget{}, fmt.Errorf("%q names no master; add ?master=NAME (the name the sentinels monitor, often \"mymaster\")", shown)
	}
	if t.addrs, err = parseHostList(hosts, "26379", shown); err != nil {
		return redisTarget{}, err
	}
	if t.db, err = pathDB(u.Path, shown); err != nil {
		return redisTarget{}, err
	}
	t.sentinelUsername, t.sentinelPassword = userPass(u.User)
	return t, nil
}

// parseRedisSocket handles redis-socket:///path?db=N.
func parseRedisSocket(raw, shown string) (redisTarget, error) {
	u, err := parseURL(raw, shown)
	if err != nil {
		return redisTarget{}, err
	}
	if u.Host != "" {
		return redisTarget{}, fmt.Errorf("%q has a host; a socket URL needs an absolute path, e.g. redis-socket:///run/redis/redis.sock", shown)
	}
	if !strings.HasPrefix(u.Path, "/") || len(u.Path) < 2 || strings.HasSuffix(u.Path, "/") {
		return redisTarget{}, fmt.Errorf("%q has no socket path; use e.g. redis-socket:///run/redis/redis.sock", shown)
	}
	q := u.Query()
	if err := onlyQuery(q, shown, "db"); err != nil {
		return redisTarget{}, err
	}
	t := redisTarget{network: "unix", addrs: []string{u.Path}}
	if v := q.Get("db"); v != "" {
		if t.db, err = strconv.Atoi(v); err != nil || t.db < 0 {
			return redisTarget{}, fmt.Errorf("%q has db=%q; it must be a database number >= 0", shown, v)
		}
	}
	t.username, t.password = userPass(u.User)
	return t, nil
}

// userPass extracts the decoded user name and password.
func userPass(ui *url.Userinfo) (string, string) {
	if ui == nil {
		return "", ""
	}
	pass, _ := ui.Password()
	return ui.Username(), pass
}

// onlyQuery rejects query parameters other than the allowed ones, so that a
// typo does not silently fall back to a default.
func onlyQuery(q url.Values, shown string, allowed ...string) error {
	for k := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return fmt.Errorf("%q has query parameter %q; this scheme takes none", shown, k)
			}
			return fmt.Errorf("%q has unknown query parameter %q; accepted: %s", shown, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// hostPort checks a host[:port] and adds defPort when the port is missing.
func hostPort(h, defPort, shown string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("%q has no host; use e.g. redis://127.0.0.1:6379/0", shown)
	}
	host, port := h, defPort
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
		host = h[1 : len(h)-1]
	case strings.Count(h, ":") == 0:
	default:
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			return "", fmt.Errorf("%q has a malformed host:port %q; IPv6 addresses need brackets, e.g. [::1]:6379", shown, h)
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q has port %q; it must be a number from 1 to 65535", shown, port)
	}
	if host == "" {
		return "", fmt.Errorf("%q has no host before :%s; use e.g. 127.0.0.1:%s", shown, port, port)
	}
	return net.JoinHostPort(host, port), nil
}

// pathDB reads the database number from a "/N" path; an empty path is 0.
func pathDB(path, shown string) (int, error) {
	p := strings.TrimPrefix(path, "/")
	if p == "" {
		return 0, nil
	}
	db, err := strconv.Atoi(p)
	if err != nil || db < 0 {
		return 0, fmt.Errorf("%q has path %q; the path must be the database number, e.g. /0", shown, path)
	}
	return db, nil
}

// redactURL masks the user part (everything before the last '@' of the
// authority) and password-like query values of a URL-ish string. It works on
// the raw text so that malformed URLs are masked too; when in doubt it masks
// more than needed.
func redactURL(raw string) string {
	prefix, rest := "", raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", r
	}
	// Everything up to the last '@' may be credentials. A stray '@' later in
	// the string only causes over-masking, which is harmless.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo := rest[:at]
		user, _, hasPass := strings.Cut(userinfo, ":")
		if hasPass && user != "" && !strings.ContainsAny(user, "/?#") {
			userinfo = user + ":" + redactedMark
		} else if hasPass {
			userinfo = ":" + redactedMark
		} else {
			userinfo = redactedMark
		}
		rest = userinfo + rest[at:]
	}
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return prefix + rest
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, kv := range parts {
		k, _, hasV := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasV && strings.Contains(strings.ToLower(name), "pass") {
			parts[i] = k + "=" + redactedMark
		}
	}
	out := prefix + base + "?" + strings.Join(parts, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}
