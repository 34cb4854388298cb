package redisconn

import (
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestOptionsReachSameServer writes through Herald's go-redis client
// and reads through asynq's, both built from one URL with ACL credentials
// and a non-zero database.
func TestOptionsReachSameServer(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	m.RequireUserAuth("herald", "p@ss:w/rd")
	u := (&url.URL{Scheme: "redis", User: url.UserPassword("herald", "p@ss:w/rd"), Host: m.Addr(), Path: "/3"}).String()
	checkSameServer(t, Config{URL: u})
	if got, err := m.DB(3).Get("probe"); err != nil || got != "value" {
		t.Fatalf("key not in database 3: %q, %v", got, err)
	}
}

// TestSocketReachesServer serves miniredis behind a unix socket and
// checks that both clients use it.
func TestSocketReachesServer(t *testing.T) {
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
	checkSameServer(t, Config{URL: "redis-socket://" + sock + "?db=2"})
	if got, err := m.DB(2).Get("probe"); err != nil || got != "value" {
		t.Fatalf("key not in database 2: %q, %v", got, err)
	}
}

func checkSameServer(t *testing.T, c Config) {
	t.Helper()
	ctx := context.Background()
	uo, err := c.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	herald := redis.NewUniversalClient(uo)
	defer herald.Close()
	if err := herald.Set(ctx, "probe", "value", 0).Err(); err != nil {
		t.Fatalf("go-redis client: %v", err)
	}
	opt, err := c.ConnOpt()
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

// TestNewClientRecovers: the clients NewClient builds carry the recovery
// settings: a one-second slot map reload on a cluster, a read timeout
// above the wait timeout, the producer's fail-fast options, and a short
// dial timeout on a Sentinel client.
func TestNewClientRecovers(t *testing.T) {
	t.Parallel()
	c, err := Config{URL: "redis-cluster://127.0.0.1:1,127.0.0.1:2", WaitTimeout: 5 * time.Second}.NewClient(ClientOptions{FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("cluster URL: NewClient = %T, want *redis.ClusterClient", c)
	}
	o := cc.Options()
	if o.ClusterStateReloadInterval != clusterReloadInterval || o.ReadTimeout != 6*time.Second || o.MaxRetries != -1 || o.DialTimeout != time.Second {
		t.Errorf("cluster options: reload %v, read timeout %v, retries %d, dial timeout %v; want %v, 6s, -1, 1s",
			o.ClusterStateReloadInterval, o.ReadTimeout, o.MaxRetries, o.DialTimeout, clusterReloadInterval)
	}
	plain, err := Config{URL: "redis://127.0.0.1:1/2"}.NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	pc, ok := plain.(*redis.Client)
	if !ok || pc.Options().DB != 2 || pc.Options().ReadTimeout != 3*time.Second || pc.Options().MaxRetries == -1 {
		t.Errorf("plain URL: %T %+v", plain, pc.Options())
	}
	opt, err := Config{URL: "redis-sentinel://127.0.0.1:1/0?master=m"}.AsynqConnOpt(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	made, ok := opt.MakeRedisClient().(*redis.Client)
	if !ok {
		t.Fatalf("AsynqConnOpt made %T, want the failover *redis.Client", opt.MakeRedisClient())
	}
	_ = made.Close()
	if got := made.Options().DialTimeout; got != sentinelDialTimeout {
		t.Errorf("Sentinel client dial timeout %v, want %v (go-redis's 5 s delays the probe after a failover)", got, sentinelDialTimeout)
	}
	ff, err := Config{URL: "redis-sentinel://127.0.0.1:1/0?master=m"}.NewClient(ClientOptions{FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	if fc, ok := ff.(*redis.Client); !ok || fc.Options().DialTimeout != sentinelDialTimeout || fc.Options().DialerRetries != 1 {
		t.Errorf("fail-fast Sentinel client: %T, want dial timeout %v and one dial attempt", ff, sentinelDialTimeout)
	}
	if got := pc.Options().DialTimeout; got == sentinelDialTimeout {
		t.Errorf("plain URL: dial timeout %v, want go-redis's default", got)
	}
	if _, err := (Config{URL: "memcached://x"}).AsynqConnOpt(ClientOptions{}); err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Errorf("bad URL: %v", err)
	}
}
