package redistest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestPortTakenIsNoticed: a server started on a port another server holds
// must not pass for started (the Ping would reach the other one, and two
// tests would share a Redis).
func TestPortTakenIsNoticed(t *testing.T) {
	t.Parallel()
	first := Start(t)
	_, p, _ := net.SplitHostPort(first.Addr)
	port, _ := strconv.Atoi(p)
	second := newServer(Binary(t), t.TempDir(), port, Options{})
	err := second.start()
	if !errors.Is(err, errPortTaken) {
		second.Kill()
		t.Fatalf("start on a taken port: %v, want errPortTaken", err)
	}
	if second.Pid() != 0 {
		t.Errorf("the server that could not bind is still running (pid %d)", second.Pid())
	}
	if err := first.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Errorf("the first server was disturbed: %v", err)
	}
}

// TestSentinelGroupFailsOver: the group's sentinels promote the replica
// when the master is killed, and the old master comes back as a replica.
func TestSentinelGroupFailsOver(t *testing.T) {
	t.Parallel()
	g := StartSentinelGroup(t, SentinelOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if addr, err := g.MasterAddr(ctx); err != nil || addr != g.Master.Addr {
		t.Fatalf("sentinels name %q (%v), want %s", addr, err, g.Master.Addr)
	}
	if err := g.Master.Client(t).Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g.Master.Kill()
	addr, err := g.WaitNewMaster(ctx, g.Master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if addr != g.Replica.Addr {
		t.Fatalf("new master %s, want the replica %s", addr, g.Replica.Addr)
	}
	if v, err := g.Replica.Client(t).Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("promoted replica: k = %q, %v; want v", v, err)
	}
	g.Master.Restart(t)
	for {
		role, err := Role(ctx, g.Master.Addr)
		if err == nil && role == "slave" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the old master never became a replica: role %q, %v", role, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterFailsOver: a six-node cluster serves every slot, and a
// killed master's replica takes its slots over.
func TestClusterFailsOver(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Nodes[0].Addr}})
	defer rdb.Close()
	for _, k := range []string{"{a}x", "{b}y", "{c}z", "{herald}:w"} {
		if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	old, err := c.MasterOf(ctx, "{herald}:w", "")
	if err != nil {
		t.Fatal(err)
	}
	// Replication is asynchronous: the write must reach the replica before
	// the kill for the promoted node to have it. WAIT counts the writes of
	// its own connection, so write once more on one connection and wait.
	direct := redis.NewClient(&redis.Options{Addr: old})
	var wait *redis.Cmd
	if _, err := direct.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "{herald}:w", "v", 0)
		wait = p.Do(ctx, "WAIT", 1, 5000)
		return nil
	}); err != nil || wait.Val() != int64(1) {
		t.Fatalf("WAIT for the replica: %v %v", wait.Val(), err)
	}
	direct.Close()
	c.ServerAt(old).Kill()
	addr, err := c.WaitNewMaster(ctx, "{herald}:w", old)
	if err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer cl.Close()
	if v, err := cl.Get(ctx, "{herald}:w").Result(); err != nil || v != "v" {
		t.Errorf("promoted node %s: GET = %q, %v; want v", addr, v, err)
	}
}
