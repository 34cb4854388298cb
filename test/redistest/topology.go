package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// SentinelOptions shape a Sentinel group.
type SentinelOptions struct {
	// Name is the master name the sentinels monitor; default "herald".
	Name string
	// DownAfter is the sentinels' down-after-milliseconds: how long a
	// master may be silent before it is taken for dead; default 1s.
	DownAfter time.Duration
	// ServerArgs go on the command line of the master and the replica
	// (both: the replica is the master after a failover).
	ServerArgs []string
	// AppendOnly turns the AOF on in the master and the replica.
	AppendOnly bool
}

// SentinelGroup is a master, one replica and three sentinels (quorum 2),
// all redis-server processes on free loopback ports, stopped at test
// cleanup. Master and Replica name the initial roles; after a failover ask
// the sentinels (MasterAddr) and use ServerAt.
type SentinelGroup struct {
	Name      string
	Master    *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinelGroup starts the group and returns once the replica is in
// sync and every sentinel knows the replica and the two other sentinels,
// so that a failover can start as soon as the master fails.
func StartSentinelGroup(tb testing.TB, o SentinelOptions) *SentinelGroup {
	tb.Helper()
	if o.Name == "" {
		o.Name = "herald"
	}
	if o.DownAfter == 0 {
		o.DownAfter = time.Second
	}
	g := &SentinelGroup{Name: o.Name}
	g.Master = Start(tb, Options{AppendOnly: o.AppendOnly, Args: o.ServerArgs})
	host, port, _ := net.SplitHostPort(g.Master.Addr)
	g.Replica = Start(tb, Options{AppendOnly: o.AppendOnly, Args: append([]string{"--replicaof", host, port}, o.ServerArgs...)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := WaitInSync(ctx, g.Replica); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	conf := fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 2\n"+
		"sentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s 10000\n"+
		"sentinel parallel-syncs %[1]s 1\n", o.Name, host, port, o.DownAfter.Milliseconds())
	for range 3 {
		g.Sentinels = append(g.Sentinels, Start(tb, Options{Sentinel: true, Config: conf}))
	}
	for _, s := range g.Sentinels {
		if err := g.waitSentinelReady(ctx, s); err != nil {
			tb.Fatalf("redistest: %v", err)
		}
	}
	return g
}

// URL returns the redis-sentinel:// URL of the group, database 0.
func (g *SentinelGroup) URL() string {
	addrs := make([]string, len(g.Sentinels))
	for i, s := range g.Sentinels {
		addrs[i] = s.Addr
	}
	return "redis-sentinel://" + strings.Join(addrs, ",") + "/0?master=" + g.Name
}

// ServerAt returns the group's data server listening on addr, or nil.
func (g *SentinelGroup) ServerAt(addr string) *Server {
	for _, s := range []*Server{g.Master, g.Replica} {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// MasterAddr asks the sentinels, in turn, which address the master has.
func (g *SentinelGroup) MasterAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range g.Sentinels {
		if s.Pid() == 0 {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
		addr, err := c.GetMasterAddrByName(ctx, g.Name).Result()
		_ = c.Close()
		if err == nil {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("no sentinel named the master: %w", errors.Join(errs...))
}

// WaitNewMaster waits until the sentinels name a master other than old
// and that server answers ROLE as a master, and returns its address.
func (g *SentinelGroup) WaitNewMaster(ctx context.Context, old string) (string, error) {
	for {
		addr, err := g.MasterAddr(ctx)
		if err == nil && addr != old {
			if role, rerr := Role(ctx, addr); rerr == nil && role == "master" {
				return addr, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("sentinels still name %s (last answer %q, %v): %w", old, addr, err, ctx.Err())
		case <-time.After(50 * time.Millisecond): // sentinels publish no event we could wait on here
		}
	}
}

// waitSentinelReady waits until s monitors the master with the replica and
// the two other sentinels known.
func (g *SentinelGroup) waitSentinelReady(ctx context.Context, s *Server) error {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	for {
		m, err := c.Master(ctx, g.Name).Result()
		if err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sentinel %s not ready (master state %v, %v): %w", s.Addr, m, err, ctx.Err())
		case <-time.After(100 * time.Millisecond): // sentinels find each other by hello messages every 2 s
		}
	}
}

// Role returns what ROLE answers on addr: "master", "slave" or "sentinel".
func Role(ctx context.Context, addr string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	defer c.Close()
	res, err := c.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", err
	}
	role, _ := res[0].(string)
	return role, nil
}

// WaitInSync waits until replica reports its link to the master up and the
// first synchronisation done.
func WaitInSync(ctx context.Context, replica *Server) error {
	c := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer c.Close()
	for {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica %s never in sync (%v): %w", replica.Addr, err, ctx.Err())
		case <-time.After(20 * time.Millisecond): // INFO is the only way to see the link state
		}
	}
}

// StartReplicated starts a master and one replica of it and returns once
// the replica is in sync and the master lists it as online (the master's
// list is what WAIT and Herald's "auto" acknowledgement go by, and it can
// lag the replica's own view).
func StartReplicated(tb testing.TB) (master, replica *Server) {
	tb.Helper()
	master = Start(tb)
	host, port, _ := net.SplitHostPort(master.Addr)
	replica = Start(tb, Options{Args: []string{"--replicaof", host, port}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := WaitInSync(ctx, replica); err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer c.Close()
	for !strings.Contains(c.Info(ctx, "replication").Val(), "connected_slaves:1") ||
		!strings.Contains(c.Info(ctx, "replication").Val(), "state=online") {
		select {
		case <-ctx.Done():
			tb.Fatalf("master %s never listed its replica as online", master.Addr)
		case <-time.After(10 * time.Millisecond): // INFO is the only way to see it
		}
	}
	return master, replica
}

// ClusterOptions shape a Cluster.
type ClusterOptions struct {
	// NodeTimeout is cluster-node-timeout; default 1s. A master silent
	// that long is failed over by its replica.
	NodeTimeout time.Duration
	// Args go on every node's command line.
	Args []string
}

// Cluster is a six-node Redis Cluster on free loopback ports: three
// masters each owning a third of the slots, and one replica of each.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts and joins the six nodes (CLUSTER ADDSLOTSRANGE,
// MEET, REPLICATE) and returns once every node sees the cluster state ok
// and every replica is in sync.
func StartCluster(tb testing.TB, o ClusterOptions) *Cluster {
	tb.Helper()
	c := &Cluster{}
	for range 6 {
		c.Nodes = append(c.Nodes, Start(tb, Options{Cluster: true, NodeTimeout: o.NodeTimeout, Args: o.Args}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.join(ctx); err != nil {
		tb.Fatalf("redistest: cluster: %v", err)
	}
	return c
}

// join assigns the slots, introduces the nodes and attaches the replicas.
func (c *Cluster) join(ctx context.Context) error {
	clients := make([]*redis.Client, len(c.Nodes))
	for i, n := range c.Nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.Addr})
		defer clients[i].Close()
	}
	const slots = 16384
	for i := range 3 {
		first, last := i*slots/3, (i+1)*slots/3-1
		if err := clients[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
			return fmt.Errorf("ADDSLOTSRANGE on %s: %w", c.Nodes[i].Addr, err)
		}
	}
	for _, n := range c.Nodes[1:] {
		host, port, _ := net.SplitHostPort(n.Addr)
		if err := clients[0].Do(ctx, "CLUSTER", "MEET", host, port, n.BusPort).Err(); err != nil {
			return fmt.Errorf("MEET %s: %w", n.Addr, err)
		}
	}
	ids := make([]string, 3)
	for i := range 3 {
		id, err := clients[i].Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return err
		}
		ids[i] = id
	}
	// A replica can only follow a master it already knows.
	for i := 3; i < 6; i++ {
		for {
			err := clients[i].Do(ctx, "CLUSTER", "REPLICATE", ids[i-3]).Err()
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "Unknown node") {
				return fmt.Errorf("REPLICATE on %s: %w", c.Nodes[i].Addr, err)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("REPLICATE on %s: %w (%w)", c.Nodes[i].Addr, err, ctx.Err())
			case <-time.After(50 * time.Millisecond): // gossip spreads the node table by itself
			}
		}
	}
	for i, cl := range clients {
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:6") {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("node %s: cluster never ok (%q, %v): %w", c.Nodes[i].Addr, info, err, ctx.Err())
			case <-time.After(50 * time.Millisecond): // gossip
			}
		}
	}
	for _, n := range c.Nodes[3:] {
		if err := WaitInSync(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// URL returns the redis-cluster:// URL listing every node.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return "redis-cluster://" + strings.Join(addrs, ",")
}

// ServerAt returns the node listening on addr, or nil.
func (c *Cluster) ServerAt(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// MasterOf returns the address of the master serving key's slot, as the
// live nodes other than skip see it.
func (c *Cluster) MasterOf(ctx context.Context, key, skip string) (string, error) {
	slot := keys.Slot(key)
	var errs []error
	for _, n := range c.Nodes {
		if n.Addr == skip || n.Pid() == 0 {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
		ranges, err := cl.ClusterSlots(ctx).Result()
		_ = cl.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range ranges {
			if slot >= r.Start && slot <= r.End && len(r.Nodes) > 0 {
				return r.Nodes[0].Addr, nil
			}
		}
		errs = append(errs, fmt.Errorf("%s: slot %d has no master", n.Addr, slot))
	}
	return "", errors.Join(errs...)
}

// WaitNewMaster waits until a live node reports a master other than old
// for key's slot and that node answers ROLE as a master.
func (c *Cluster) WaitNewMaster(ctx context.Context, key, old string) (string, error) {
	for {
		addr, err := c.MasterOf(ctx, key, old)
		if err == nil && addr != old {
			if role, rerr := Role(ctx, addr); rerr == nil && role == "master" {
				return addr, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("slot of %q still served by %s (last %q, %v): %w", key, old, addr, err, ctx.Err())
		case <-time.After(50 * time.Millisecond): // the cluster bus is not ours to listen to
		}
	}
}

// CommandCalls returns the calls per command name that INFO commandstats
// reports on c's server (the commands scripts call count too), the INFO
// calls themselves left out.
func CommandCalls(ctx context.Context, c interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}) (map[string]int64, error) {
	s, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok || name == "info" {
			continue
		}
		v, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("INFO commandstats: %q: %w", line, err)
		}
		out[name] = n
	}
	return out, nil
}
