package settings

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

func TestRedisParse(t *testing.T) {
	t.Parallel()
	type want struct {
		network, master          string
		addrs                    []string
		user, pass, sUser, sPass string
		db                       int
		tlsName                  string
	}
	tests := []struct {
		url  string
		want want
	}{
		{DefaultRedisURL, want{network: "tcp", addrs: []string{"127.0.0.1:6379"}}},
		{"redis://cache", want{network: "tcp", addrs: []string{"cache:6379"}}},
		{"redis://cache:7000/", want{network: "tcp", addrs: []string{"cache:7000"}}},
		{"REDIS://u:p%40ss@cache:7000/5", want{network: "tcp", addrs: []string{"cache:7000"}, user: "u", pass: "p@ss", db: 5}},
		{"redis://:secret@[::1]:6380/2", want{network: "tcp", addrs: []string{"[::1]:6380"}, pass: "secret", db: 2}},
		{"redis://[::1]", want{network: "tcp", addrs: []string{"[::1]:6379"}}},
		{"rediss://u:p@redis.example.com:6380/1", want{network: "tcp", addrs: []string{"redis.example.com:6380"}, user: "u", pass: "p", db: 1, tlsName: "redis.example.com"}},
		{"redis-sentinel://:spw@s1:26379,s2:26380,s3/4?master=mymaster",
			want{network: "tcp", master: "mymaster", addrs: []string{"s1:26379", "s2:26380", "s3:26379"}, sPass: "spw", db: 4}},
		{"redis-sentinel://[::1]:26379,[fe80::1]?master=m&username=app&password=mpw",
			want{network: "tcp", master: "m", addrs: []string{"[::1]:26379", "[fe80::1]:26379"}, user: "app", pass: "mpw"}},
		{"redis-sentinel://sentuser:spw@s1?master=m", want{network: "tcp", master: "m", addrs: []string{"s1:26379"}, sUser: "sentuser", sPass: "spw"}},
		{"redis-socket:///run/redis/redis.sock", want{network: "unix", addrs: []string{"/run/redis/redis.sock"}}},
		{"redis-socket://:pw@/run/redis.sock?db=3", want{network: "unix", addrs: []string{"/run/redis.sock"}, pass: "pw", db: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			r := Redis{URL: tc.url}
			opt, err := r.ConnOpt()
			if err != nil {
				t.Fatalf("ConnOpt: %v", err)
			}
			uo, err := r.UniversalOptions()
			if err != nil {
				t.Fatalf("UniversalOptions: %v", err)
			}
			w := tc.want
			if !slices.Equal(uo.Addrs, w.addrs) || uo.MasterName != w.master || uo.DB != w.db ||
				uo.Username != w.user || uo.Password != w.pass ||
				uo.SentinelUsername != w.sUser || uo.SentinelPassword != w.sPass {
				t.Errorf("UniversalOptions = %+v, want %+v", uo, w)
			}
			checkTLS(t, "UniversalOptions", uo.TLSConfig, w.tlsName)
			switch o := opt.(type) {
			case asynq.RedisClientOpt:
				if w.master != "" {
					t.Fatalf("ConnOpt = RedisClientOpt, want a failover option")
				}
				if o.Network != w.network || o.Addr != w.addrs[0] || o.Username != w.user || o.Password != w.pass || o.DB != w.db {
					t.Errorf("RedisClientOpt = %+v, want %+v", o, w)
				}
				checkTLS(t, "ConnOpt", o.TLSConfig, w.tlsName)
				if o.TLSConfig != nil && o.TLSConfig == uo.TLSConfig {
					t.Error("ConnOpt and UniversalOptions share one *tls.Config")
				}
			case asynq.RedisFailoverClientOpt:
				if w.master == "" {
					t.Fatalf("ConnOpt = RedisFailoverClientOpt, want a plain client option")
				}
				if o.MasterName != w.master || !slices.Equal(o.SentinelAddrs, w.addrs) || o.DB != w.db ||
					o.Username != w.user || o.Password != w.pass || o.SentinelUsername != w.sUser || o.SentinelPassword != w.sPass {
					t.Errorf("RedisFailoverClientOpt = %+v, want %+v", o, w)
				}
			default:
				t.Fatalf("ConnOpt returned %T", opt)
			}
		})
	}
}

func checkTLS(t *testing.T, what string, c *tls.Config, serverName string) {
	t.Helper()
	switch {
	case serverName == "" && c != nil:
		t.Errorf("%s: TLS enabled for a plain URL", what)
	case serverName != "" && c == nil:
		t.Errorf("%s: TLS missing for rediss://", what)
	case c != nil && (c.ServerName != serverName || c.MinVersion < tls.VersionTLS12):
		t.Errorf("%s: TLS ServerName %q MinVersion %x, want %q and TLS 1.2+", what, c.ServerName, c.MinVersion, serverName)
	}
}

func TestRedisParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"", "is empty"},
		{"http://cache:6379", "accepted schemes are redis://, rediss://, redis-sentinel://, redis-cluster://, rediss-cluster:// and redis-socket://"},
		{"unix:///tmp/redis.sock", "accepted schemes are"},
		{"127.0.0.1:6379", `did you mean "redis://127.0.0.1:6379/0"`},
		{"redis://", "has no host"},
		{"redis://:6379/0", "has no host"},
		{"redis://cache:notaport/0", "not a valid URL"},
		{"redis://cache:70000/0", "from 1 to 65535"},
		{"redis://cache/db1", "database number"},
		{"redis://cache/1/2", "database number"},
		{"redis://cache/-1", "database number"},
		{"redis://cache/0?dial_timeout=1s", "takes none"},
		{"redis-sentinel://s1,s2/0", "add ?master=NAME"},
		{"redis-sentinel://s1,,s2/0?master=m", "has no host"},
		{"redis-sentinel://s1:x?master=m", "from 1 to 65535"},
		{"redis-sentinel://s1?master=m&master_name=x", `unknown query parameter "master_name"; accepted: master, username, password`},
		{"redis-socket://host/run/redis.sock", "has a host"},
		{"redis-socket://", "no socket path"},
		{"redis-socket:///run/redis.sock?db=x", "database number"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			r := Redis{URL: tc.url}
			_, err := r.ConnOpt()
			if err == nil {
				t.Fatal("ConnOpt accepted the URL")
			}
			if _, uerr := r.UniversalOptions(); uerr == nil || uerr.Error() != err.Error() {
				t.Errorf("UniversalOptions error %v differs from ConnOpt error %v", uerr, err)
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Env != "REDIS_URL" || fe.Flag != "redis-url" {
				t.Errorf("error %v is not a config.FieldError for REDIS_URL", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "REDIS_URL (-redis-url) ") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q should start with REDIS_URL (-redis-url) and contain %q", msg, tc.want)
			}
		})
	}
}

func TestRedisRedacted(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://user:s3cret@cache:6379/1", "redis://user:xxxxx@cache:6379/1"},
		{"redis://:s3cret@cache:6379/1", "redis://:xxxxx@cache:6379/1"},
		{"rediss://s3cret@cache", "rediss://xxxxx@cache"},
		{"redis://user:s3c@ret@cache", "redis://user:xxxxx@cache"},
		{"redis://user:s3c/ret@cache", "redis://user:xxxxx@cache"},
		{"redis-sentinel://:s3cret@a:1,b:2/0?master=m&password=s3cret2", "redis-sentinel://:xxxxx@a:1,b:2/0?master=m&password=xxxxx"},
		{"redis-sentinel://a,b?Password=s3cret#frag", "redis-sentinel://a,b?Password=xxxxx#frag"},
		{"redis-socket://:s3cret@/run/r.sock?db=1", "redis-socket://:xxxxx@/run/r.sock?db=1"},
		{"s3cret@cache:6379", "xxxxx@cache:6379"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			r := Redis{URL: tc.in}
			if got := r.Redacted(); got != tc.want {
				t.Errorf("Redacted() = %q, want %q", got, tc.want)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRedisErrorsNeverLeakPasswords feeds malformed URLs carrying a password
// through every path that can report them.
func TestRedisErrorsNeverLeakPasswords(t *testing.T) {
	t.Parallel()
	const secret = "s3cretPW"
	urls := []string{
		"http://u:" + secret + "@cache:6379",
		"redis://u:" + secret + "@cache:bad/0",
		"redis://:" + secret + "@cache/x",
		"redis://:" + secret + " @cache/0",
		"redis://:pa/" + secret + "@cache/0",
		"redis://:" + secret + "@cache/0?password=" + secret,
		"redis-sentinel://:" + secret + "@s1,s2/0",
		"redis-sentinel://:" + secret + "@s1/0?master=m&password=" + secret + "&x=1",
		"redis-sentinel://:" + secret + "@[::1/0?master=m",
		"redis-socket://:" + secret + "@host/x.sock",
		"u:" + secret + "@cache:6379",
		"redis://u:" + secret + "@%zz/0",
	}
	for _, u := range urls {
		r := Redis{URL: u}
		_, err1 := r.ConnOpt()
		_, err2 := r.UniversalOptions()
		err3 := Worker{Redis: r}.WithDefaults().Validate()
		err4 := Producer{Redis: r, Keyring: httpapi.KeyringConfig{AuthDisabled: true}}.WithDefaults().Validate()
		for i, err := range []error{err1, err2, err3, err4} {
			if err == nil {
				t.Errorf("%d: %q was accepted", i, u)
				continue
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%d: error for a bad URL leaks the password: %v", i, err)
			}
		}
		if strings.Contains(r.Redacted(), secret) {
			t.Errorf("Redacted(%q) = %q leaks the password", u, r.Redacted())
		}
	}
}

// TestRedisOptionsReachSameServer writes through Herald's go-redis client
// and reads through asynq's, both built from one URL with ACL credentials
// and a non-zero database.
func TestRedisOptionsReachSameServer(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	m.RequireUserAuth("herald", "p@ss:w/rd")
	u := (&url.URL{Scheme: "redis", User: url.UserPassword("herald", "p@ss:w/rd"), Host: m.Addr(), Path: "/3"}).String()
	checkSameServer(t, Redis{URL: u})
	if got, err := m.DB(3).Get("probe"); err != nil || got != "value" {
		t.Fatalf("key not in database 3: %q, %v", got, err)
	}
}

// TestRedisSocketReachesServer serves miniredis behind a unix socket and
// checks that both clients use it.
func TestRedisSocketReachesServer(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	sock := filepath.Join(t.TempDir(), "r.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix sockets unavailable: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", m.Addr())
			if err != nil {
				c.Close()
				return
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Go(func() { io.Copy(up, c); up.Close() })
			wg.Go(func() { io.Copy(c, up); c.Close() })
		}
	})
	checkSameServer(t, Redis{URL: "redis-socket://" + sock + "?db=2"})
	if got, err := m.DB(2).Get("probe"); err != nil || got != "value" {
		t.Fatalf("key not in database 2: %q, %v", got, err)
	}
}

func checkSameServer(t *testing.T, r Redis) {
	t.Helper()
	ctx := context.Background()
	uo, err := r.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	herald := redis.NewUniversalClient(uo)
	defer herald.Close()
	if err := herald.Set(ctx, "probe", "value", 0).Err(); err != nil {
		t.Fatalf("go-redis client: %v", err)
	}
	opt, err := r.ConnOpt()
	if err != nil {
		t.Fatal(err)
	}
	aq, ok := opt.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		t.Fatalf("asynq client is %T", opt.MakeRedisClient())
	}
	defer aq.Close()
	if got, err := aq.Get(ctx, "probe").Result(); err != nil || got != "value" {
		t.Fatalf("asynq client read %q, %v", got, err)
	}
}

func TestRedisCluster(t *testing.T) {
	t.Parallel()
	r := Redis{URL: "redis-cluster://app:pw@n1:7000,n2,[::1]:7002"}
	opt, err := r.ConnOpt()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := opt.(asynq.RedisClusterClientOpt)
	if !ok {
		t.Fatalf("ConnOpt = %T, want asynq.RedisClusterClientOpt", opt)
	}
	if strings.Join(c.Addrs, ",") != "n1:7000,n2:6379,[::1]:7002" || c.Username != "app" || c.Password != "pw" || c.TLSConfig != nil {
		t.Fatalf("cluster options = %+v", c)
	}
	uo, err := r.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !uo.IsClusterMode || len(uo.Addrs) != 3 || uo.MasterName != "" {
		t.Fatalf("universal options = %+v", uo)
	}
	one, err := Redis{URL: "rediss-cluster://cfg.example.com:6380"}.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !one.IsClusterMode || one.TLSConfig == nil || one.TLSConfig.ServerName != "cfg.example.com" {
		t.Fatalf("single-seed TLS cluster = %+v", one)
	}
	if _, err := (Redis{URL: "redis-cluster://n1/3"}).ConnOpt(); err == nil || !strings.Contains(err.Error(), "only database 0") {
		t.Fatalf("database on a cluster URL: %v", err)
	}
	if !strings.Contains(Redis{URL: "redis-cluster://app:pw@n1"}.Redacted(), "xxxxx") || strings.Contains(Redis{URL: "redis-cluster://app:pw@n1"}.Redacted(), "pw@") {
		t.Fatal("cluster URL password not redacted")
	}
}

// TestRedisWaitSettings: HERALD_REDIS_WAIT_REPLICAS and _TIMEOUT parse,
// default and render back, and bad values name the setting and the fix.
func TestRedisWaitSettings(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) (Redis, error) {
		w, _, err := LoadWorkerArgs(args, func(k string) string { return env[k] })
		return w.Redis, err
	}
	for _, tc := range []struct {
		value    string
		replicas int
		auto     bool
	}{{"", 0, true}, {"auto", 0, true}, {"AUTO", 0, true}, {"0", 0, false}, {"off", 0, false}, {"2", 2, false}} {
		r, err := load(map[string]string{EnvRedisWaitReplicas: tc.value})
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		n, auto, timeout := r.Durability()
		if n != tc.replicas || auto != tc.auto || timeout != DefaultRedisWaitTimeout {
			t.Errorf("%q: Durability() = %d, %v, %v; want %d, %v, %v", tc.value, n, auto, timeout, tc.replicas, tc.auto, DefaultRedisWaitTimeout)
		}
	}
	r, err := load(nil, "-redis-wait-replicas", "1", "-redis-wait-timeout", "250ms")
	if err != nil {
		t.Fatal(err)
	}
	if n, auto, timeout := r.Durability(); n != 1 || auto || timeout != 250*time.Millisecond {
		t.Errorf("flags: Durability() = %d, %v, %v; want 1, false, 250ms", n, auto, timeout)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvRedisWaitReplicas: "two"}, `HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) must be auto, 0 (never wait) or a number of replicas such as 1, got "two"`},
		{map[string]string{EnvRedisWaitReplicas: "-1"}, "HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) must be auto"},
		{map[string]string{EnvRedisWaitReplicas: "65"}, "HERALD_REDIS_WAIT_REPLICAS (-redis-wait-replicas) is 65; use auto, 0 (never wait) or a number of replicas from 1 to 64"},
		{map[string]string{EnvRedisWaitTimeout: "1"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) must be a duration with a unit"},
		{map[string]string{EnvRedisWaitTimeout: "30s"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is 30s; use a duration from 1ms to 10s such as 1s"},
		{map[string]string{EnvRedisWaitTimeout: "-1s"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is -1s"},
		{map[string]string{EnvRedisWaitTimeout: "500us"}, "HERALD_REDIS_WAIT_TIMEOUT (-redis-wait-timeout) is 500µs; Redis WAIT counts whole milliseconds"},
	} {
		_, err := load(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %q", tc.env, err, tc.want)
		}
	}
	var shown []string
	for _, s := range WorkerSettings() {
		if s.Env == EnvRedisWaitReplicas || s.Env == EnvRedisWaitTimeout {
			shown = append(shown, s.Env+"="+s.Default)
		}
	}
	if strings.Join(shown, " ") != "HERALD_REDIS_WAIT_REPLICAS=auto HERALD_REDIS_WAIT_TIMEOUT=1s" {
		t.Errorf("documented defaults: %v", shown)
	}
}

// TestNewClientRecovers: the clients NewClient builds carry the recovery
// settings: a one-second slot map reload on a cluster, a read timeout
// above the wait timeout, and the producer's fail-fast options.
func TestNewClientRecovers(t *testing.T) {
	t.Parallel()
	c, err := Redis{URL: "redis-cluster://127.0.0.1:1,127.0.0.1:2", WaitTimeout: 5 * time.Second}.NewClient(ClientOptions{FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("cluster URL: NewClient = %T, want *redis.ClusterClient", c)
	}
	o := cc.Options()
	if o.ClusterStateReloadInterval != ClusterReloadInterval || o.ReadTimeout != 6*time.Second || o.MaxRetries != -1 || o.DialTimeout != time.Second {
		t.Errorf("cluster options: reload %v, read timeout %v, retries %d, dial timeout %v; want %v, 6s, -1, 1s",
			o.ClusterStateReloadInterval, o.ReadTimeout, o.MaxRetries, o.DialTimeout, ClusterReloadInterval)
	}
	plain, err := Redis{URL: "redis://127.0.0.1:1/2"}.NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	pc, ok := plain.(*redis.Client)
	if !ok || pc.Options().DB != 2 || pc.Options().ReadTimeout != 3*time.Second || pc.Options().MaxRetries == -1 {
		t.Errorf("plain URL: %T %+v", plain, pc.Options())
	}
	opt, err := Redis{URL: "redis-sentinel://127.0.0.1:1/0?master=m"}.AsynqConnOpt(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	made, ok := opt.MakeRedisClient().(*redis.Client)
	if !ok {
		t.Fatalf("AsynqConnOpt made %T, want the failover *redis.Client", opt.MakeRedisClient())
	}
	_ = made.Close()
	if _, err := (Redis{URL: "memcached://x"}).AsynqConnOpt(ClientOptions{}); err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Errorf("bad URL: %v", err)
	}
}

// TestClusterReloadsOnRefusal: a node that refuses connections makes the
// cluster client reload its slot map at once (the hook), rather than at
// the next interval.
func TestClusterReloadsOnRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false}, {redis.Nil, false}, {context.Canceled, false},
		{&net.OpError{Op: "dial", Err: errors.New("connect: connection refused")}, true},
		{io.EOF, true}, {redis.ErrClosed, true},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true}, // a hung node
		{errors.New("READONLY You can't write against a read only replica."), true},
		{errors.New("CLUSTERDOWN The cluster is down"), true},
		{errors.New("ERR wrong number of arguments"), false},
	} {
		if got := topologyChanged(tc.err); got != tc.want {
			t.Errorf("topologyChanged(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestReplicaHint names the fix in the URL's own terms and no password.
func TestReplicaHint(t *testing.T) {
	t.Parallel()
	plain := Redis{URL: "redis://u:secret@cache:6379/0"}.ReplicaHint()
	if !strings.Contains(plain, "redis-sentinel://") || !strings.Contains(plain, EnvRedisURL) || strings.Contains(plain, "secret") {
		t.Errorf("plain URL hint: %q", plain)
	}
	if h := (Redis{URL: "redis-sentinel://:secret@s1/0?master=m"}).ReplicaHint(); !strings.Contains(h, `"m"`) || strings.Contains(h, "secret") {
		t.Errorf("sentinel hint: %q", h)
	}
	if h := (Redis{URL: "redis-cluster://n1"}).ReplicaHint(); !strings.Contains(h, "slot map") {
		t.Errorf("cluster hint: %q", h)
	}
}
