package durable_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// pair starts a master and a replica in sync with it.
func pair(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	return redistest.StartReplicated(t)
}

// TestWaitCoversOtherConnections: Wait confirms writes another client
// made (asynq's connections, in Herald), because it writes a marker of its
// own ahead of its WAIT: with the replica paused it must fail, and once it
// returns the replica must hold the other client's write.
func TestWaitCoversOtherConnections(t *testing.T) {
	t.Parallel()
	master, replica := pair(t)
	ctx := context.Background()
	writer := master.Client(t)
	a := durable.New(master.Client(t), durable.Config{Replicas: 1, Timeout: 300 * time.Millisecond})
	onReplica := replica.Client(t)
	for i := range 50 {
		k := "k" + strconv.Itoa(i)
		if err := writer.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := a.Wait(ctx); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if n, err := onReplica.Exists(ctx, k).Result(); err != nil || n != 1 {
			t.Fatalf("write %d: Wait returned but the replica lacks %s (%d, %v)", i, k, n, err)
		}
	}

	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replica.Resume() }()
	if err := writer.Set(ctx, "late", 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := a.Wait(ctx)
	if !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("Wait with the replica paused: %v, want ErrNotReplicated", err)
	}
	if took := time.Since(start); took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("Wait gave up after %v, want about the 300ms timeout", took)
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("Wait after the replica resumed: %v", err)
	}
	if n, _ := onReplica.Exists(ctx, "late").Result(); n != 1 {
		t.Error("the replica lacks the write made while it was paused")
	}
}

// TestWaitAuto: auto waits on a node with an online replica and touches
// nothing on a node without one.
func TestWaitAuto(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	alone := redistest.Start(t)
	rdb := alone.Client(t)
	a := durable.New(rdb, durable.Config{Auto: true, Timeout: 200 * time.Millisecond})
	if !a.Enabled() {
		t.Fatal("auto reports itself off")
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("auto without a replica: %v", err)
	}
	if n, _ := rdb.DBSize(ctx).Result(); n != 0 {
		t.Errorf("auto without a replica wrote %d keys, want none", n)
	}

	master, replica := pair(t)
	a = durable.New(master.Client(t), durable.Config{Auto: true, Timeout: 200 * time.Millisecond})
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("auto with a replica: %v", err)
	}
	if n, _ := master.Client(t).Exists(ctx, durable.Marker("")).Result(); n != 1 {
		t.Error("auto with a replica wrote no marker: it did not wait")
	}
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replica.Resume() }()
	if err := a.Wait(ctx); !errors.Is(err, durable.ErrNotReplicated) {
		t.Fatalf("auto with the replica paused: %v, want ErrNotReplicated", err)
	}
}

// TestWaitMoreReplicasThanThereAre: a count the node cannot reach fails
// after the timeout, naming how many confirmed.
func TestWaitMoreReplicasThanThereAre(t *testing.T) {
	t.Parallel()
	master, _ := pair(t)
	a := durable.New(master.Client(t), durable.Config{Replicas: 2, Timeout: 100 * time.Millisecond})
	err := a.Wait(context.Background())
	// The one replica may or may not have answered within the timeout on
	// a busy machine; either way the count is named and short of two.
	if !errors.Is(err, durable.ErrNotReplicated) ||
		!(strings.Contains(err.Error(), "1 of 2 replicas") || strings.Contains(err.Error(), "0 of 2 replicas")) {
		t.Fatalf("Wait for 2 of 1 replicas: %v", err)
	}
}

// TestWaitOffAndUnreachable: an Acker that is off does nothing, even with
// Redis down; one that is on reports an unreachable Redis as such.
func TestWaitOffAndUnreachable(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	var nilAcker *durable.Acker
	if err := nilAcker.Wait(context.Background()); err != nil {
		t.Errorf("nil Acker: %v", err)
	}
	if err := durable.New(rdb, durable.Config{}).Wait(context.Background()); err != nil {
		t.Errorf("Acker with 0 replicas: %v", err)
	}
	err := durable.New(rdb, durable.Config{Replicas: 1}).Wait(context.Background())
	if !errors.Is(err, durable.ErrUnreachable) {
		t.Errorf("Redis down: %v, want ErrUnreachable", err)
	}
}

// TestWaitOnClusterNodes: on a cluster Wait asks the master of each slot
// written to, and only those: with the replica of one master paused, a
// wait for that master's slot fails and one for another master's passes.
func TestWaitOnClusterNodes(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, redistest.ClusterOptions{NodeTimeout: 5 * time.Second})
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Nodes[0].Addr}})
	defer rdb.Close()
	herald := keys.Bot("").BotLog()
	heraldMaster, err := c.MasterOf(ctx, herald, "")
	if err != nil {
		t.Fatal(err)
	}
	// A queue whose keys live on another master.
	var queue string
	for i := 0; queue == ""; i++ {
		q := "q" + strconv.Itoa(i)
		if m, err := c.MasterOf(ctx, "asynq:{"+q+"}:pending", ""); err == nil && m != heraldMaster {
			queue = q
		}
	}
	queueKey := "asynq:{" + queue + "}:pending"
	a := durable.New(rdb, durable.Config{Replicas: 1, Timeout: 300 * time.Millisecond})
	tracked := durable.Track(ctx)
	durable.Wrote(tracked, queueKey)
	if err := a.Wait(tracked, herald); err != nil {
		t.Fatalf("both nodes healthy: %v", err)
	}
	queueReplica := replicaOf(t, c, queueKey)
	if err := queueReplica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = queueReplica.Resume() }()
	if err := a.Wait(ctx, herald); err != nil {
		t.Errorf("wait on Herald's slot only, its replica healthy: %v", err)
	}
	if err := a.Wait(tracked, herald); !errors.Is(err, durable.ErrNotReplicated) {
		t.Errorf("wait including the queue's slot, its replica paused: %v, want ErrNotReplicated", err)
	}
}

// replicaOf returns the replica of the master serving key.
func replicaOf(t *testing.T, c *redistest.Cluster, key string) *redistest.Server {
	t.Helper()
	ctx := context.Background()
	master, err := c.MasterOf(ctx, key, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		info, err := n.Client(t).Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+port(master)+"\r") {
			return n
		}
	}
	t.Fatalf("no replica of %s", master)
	return nil
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// TestCheckPrimary: a master passes, a replica is a *NotPrimaryError
// naming its master, and a server that does not know ROLE passes as a
// PING would.
func TestCheckPrimary(t *testing.T) {
	t.Parallel()
	master, replica := pair(t)
	ctx := context.Background()
	if err := durable.CheckPrimary(ctx, master.Client(t)); err != nil {
		t.Errorf("master: %v", err)
	}
	err := durable.CheckPrimary(ctx, replica.Client(t))
	var np *durable.NotPrimaryError
	if !errors.As(err, &np) || np.Role != "slave" || np.Master != master.Addr || np.Addr != replica.Addr {
		t.Errorf("replica: %v (%+v), want a NotPrimaryError naming master %s", err, np, master.Addr)
	}
	mr := miniredis.RunT(t)
	mc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer mc.Close()
	if err := durable.CheckPrimary(ctx, mc); err != nil {
		t.Errorf("server without ROLE: %v", err)
	}
	if err := durable.New(mc, durable.Config{Auto: true}).Wait(ctx); err != nil {
		t.Errorf("auto on a server without INFO replication: %v", err)
	}
	mr.Close()
	if err := durable.CheckPrimary(ctx, mc); err == nil || errors.As(err, &np) {
		t.Errorf("server down: %v, want a connection error", err)
	}
}

func TestMarkerSharesTheSlot(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"asynq:{default}:pending", "asynq:{critical}:t:abc", keys.Bot("").BotLog(), keys.Idempotency("x"), "no-tag"} {
		want := keys.Slot(k)
		if k == "no-tag" {
			want = keys.Slot(keys.Bot("").BotLog())
		}
		if got := keys.Slot(durable.Marker(k)); got != want {
			t.Errorf("Marker(%q) = %q in slot %d, want slot %d", k, durable.Marker(k), got, want)
		}
	}
}

func TestOnlineReplicas(t *testing.T) {
	t.Parallel()
	info := "# Replication\r\nrole:master\r\nconnected_slaves:3\r\n" +
		"slave0:ip=127.0.0.1,port=7001,state=online,offset=100,lag=0\r\n" +
		"slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n" +
		"slave2:ip=127.0.0.1,port=7003,state=online,offset=90,lag=1\r\n" +
		"master_failover_state:no-failover\r\nslave_read_only:1\r\n"
	if n := durable.OnlineReplicas(info); n != 2 {
		t.Errorf("OnlineReplicas = %d, want 2", n)
	}
	if n := durable.OnlineReplicas("# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"); n != 0 {
		t.Errorf("replica's own INFO: %d, want 0", n)
	}
}
