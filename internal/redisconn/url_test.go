package redisconn

import (
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
	"github.com/hibiken/asynq"
)

func TestParse(t *testing.T) {
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
		{defaultURL, want{network: "tcp", addrs: []string{"127.0.0.1:6379"}}},
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
			r := Config{URL: tc.url}
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

func TestParseErrors(t *testing.T) {
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
			r := Config{URL: tc.url}
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

func TestClusterURL(t *testing.T) {
	t.Parallel()
	r := Config{URL: "redis-cluster://app:pw@n1:7000,n2,[::1]:7002"}
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
	one, err := Config{URL: "rediss-cluster://cfg.example.com:6380"}.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !one.IsClusterMode || one.TLSConfig == nil || one.TLSConfig.ServerName != "cfg.example.com" {
		t.Fatalf("single-seed TLS cluster = %+v", one)
	}
	if _, err := (Config{URL: "redis-cluster://n1/3"}).ConnOpt(); err == nil || !strings.Contains(err.Error(), "only database 0") {
		t.Fatalf("database on a cluster URL: %v", err)
	}
	if !strings.Contains(Config{URL: "redis-cluster://app:pw@n1"}.Redacted(), "xxxxx") || strings.Contains(Config{URL: "redis-cluster://app:pw@n1"}.Redacted(), "pw@") {
		t.Fatal("cluster URL password not redacted")
	}
}
