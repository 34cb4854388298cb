package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// TestContractHeartbeat: with heartbeatHook on its client, the real asynq
// server's heartbeat runs Herald's server-state script (Redis has it
// cached), and asynq's Inspector, which the web UI uses, still reports the
// server and every task it runs, on one server and on a Redis Cluster. At
// shutdown asynq's own script clears both keys: the hook leaves it alone.
func TestContractHeartbeat(t *testing.T) {
	t.Parallel()
	onServerAndCluster(t, checkHeartbeat)
}

// onServerAndCluster runs check as two parallel subtests: on one
// redis-server (node is its client) and on a 6-node Redis Cluster (node is
// nil: the master of the slot the check uses).
func onServerAndCluster(t *testing.T, check func(t *testing.T, rdb redis.UniversalClient, node redis.Scripter)) {
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		rdb := redistest.Start(t, redistest.Options{}).Client(t)
		check(t, rdb, rdb)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.StartCluster(t, redistest.ClusterOptions{})
		var addrs []string
		for _, n := range c.Nodes {
			addrs = append(addrs, n.Addr)
		}
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		t.Cleanup(func() { _ = rdb.Close() })
		check(t, rdb, nil)
	})
}

// checkHeartbeat runs an asynq server on rdb with the hook and checks what
// its heartbeat wrote. node is where the script is looked for (nil: the
// master of the heartbeat's slot).
func checkHeartbeat(t *testing.T, rdb redis.UniversalClient, node redis.Scripter) {
	rdb.AddHook(heartbeatHook())
	const q, running = "default", 5
	started := make(chan string, running)
	release := make(chan struct{})
	as := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: running, Queues: map[string]int{q: 1}, LogLevel: asynq.FatalLevel,
	})
	if err := as.Start(holding(started, release)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { close(release); as.Shutdown() }) }
	t.Cleanup(stop)
	client := asynq.NewClientFromRedisClient(rdb)
	for i := range running {
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(fmt.Sprint("hb-", i))); err != nil {
			t.Fatal(err)
		}
	}
	for range running {
		receive(t, started, "a running task")
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	// asynq writes its state every 5 s.
	waitFor(t, "a heartbeat that lists every running task", func() bool {
		servers, err := insp.Servers()
		return err == nil && len(servers) == 1 && len(servers[0].ActiveWorkers) == running
	})
	servers, _ := insp.Servers()
	if node == nil {
		s := servers[0]
		m, err := rdb.(*redis.ClusterClient).MasterForKey(context.Background(), fmt.Sprintf("asynq:servers:{%s:%d:%s}", s.Host, s.PID, s.ID))
		if err != nil {
			t.Fatal(err)
		}
		node = m
	}
	known, err := node.ScriptExists(context.Background(), serverStateScript.Hash()).Result()
	if err != nil || len(known) != 1 || !known[0] {
		t.Fatalf("Herald's server-state script never ran (SCRIPT EXISTS %v, %v): the hook no longer recognises asynq's", known, err)
	}
	ids := map[string]bool{}
	for _, w := range servers[0].ActiveWorkers {
		ids[w.TaskID] = true
		if w.Queue != q || w.TaskType != "t" {
			t.Errorf("worker info %+v: want queue %q, type t", w, q)
		}
	}
	for i := range running {
		if !ids[fmt.Sprint("hb-", i)] {
			t.Errorf("task hb-%d missing from the server's workers %v", i, ids)
		}
	}
	stop()
	servers, err = insp.Servers()
	if err != nil || len(servers) != 0 {
		t.Fatalf("after shutdown the servers are %v (%v); asynq's clearing script should have removed them", servers, err)
	}
}
