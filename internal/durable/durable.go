package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is wrapped by Wait's error when a node's replicas did
// not confirm the writes within the timeout. The writes are on the master
// and may well survive; they are just not known to.
var ErrNotReplicated = errors.New("write not confirmed by enough replicas")

// ErrUnreachable is wrapped by Wait's error when a node could not be asked
// at all (refused connection, READONLY, a cluster moving slots).
var ErrUnreachable = errors.New("redis did not take the confirmation")

// Config says how much replication an acknowledgement needs.
type Config struct {
	// Replicas is how many replicas of each node written to must hold the
	// writes; 0 (and not Auto) turns the waits off.
	Replicas int
	// Auto waits for one replica on a node that has at least one online
	// replica (INFO replication, re-read at most every ReplicasTTL), and
	// for none on a node without. Replicas is ignored.
	Auto bool
	// Timeout bounds one WAIT; default 1s.
	Timeout time.Duration
}

// ReplicasTTL is how long Auto trusts a node's count of online replicas.
const ReplicasTTL = time.Second

// markerTTL keeps the marker keys from outliving a quiet spell.
const markerTTL = time.Minute

// Acker waits until the writes made so far reached enough replicas. It is
// safe for concurrent use; the zero replica count makes every call a no-op
// that touches nothing.
type Acker struct {
	rdb redis.UniversalClient
	cfg Config

	mu    sync.Mutex
	known map[string]replicaCount // node address -> its online replicas
	// reading holds, per node address, the INFO replication under way;
	// closed once its count is in known.
	reading map[string]chan struct{}
	now     func() time.Time
}

type replicaCount struct {
	n  int
	at time.Time
}

// New returns an Acker writing its markers through rdb, which must be the
// client that made (or shares the servers of) the writes to confirm. A
// negative Replicas counts as 0, a Timeout under a millisecond as the
// default, and the timeout is capped 100ms below the client's read timeout
// so that the socket deadline never cuts a WAIT short (internal/redisconn
// validates the settings and builds clients with room for them).
func New(rdb redis.UniversalClient, cfg Config) *Acker {
	cfg.Replicas = max(cfg.Replicas, 0)
	if cfg.Timeout < time.Millisecond {
		cfg.Timeout = time.Second
	}
	if rt := readTimeout(rdb); rt > 200*time.Millisecond && cfg.Timeout > rt-100*time.Millisecond {
		cfg.Timeout = rt - 100*time.Millisecond
	}
	return &Acker{rdb: rdb, cfg: cfg, known: map[string]replicaCount{}, reading: map[string]chan struct{}{}, now: time.Now}
}

func (c Config) enabled() bool { return c.Auto || c.Replicas > 0 }

// Enabled reports whether Wait does anything at all.
func (a *Acker) Enabled() bool { return a != nil && a.cfg.enabled() }

// readTimeout returns the client's socket read timeout, or 0 when unknown.
func readTimeout(rdb redis.UniversalClient) time.Duration {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout
	case *redis.ClusterClient:
		return c.Options().ReadTimeout
	}
	return 0
}

// Wait returns once the replicas Config asks for hold every write made
// before the call to the nodes of keys and of the keys recorded in ctx
// (Track, Wrote): on a single server or a Sentinel group that is the one
// master, whatever the keys; on a Cluster, the master of each key's slot.
// Any key of a slot will do (a queue's pending list, a Herald key).
//
// Redis's WAIT only counts the writes of the connection that sends it, and
// the writes to confirm were made on other pooled connections (asynq's, the
// limiter's). So Wait writes a small marker key of its own on the node and
// sends WAIT right behind it on the same connection (one pipeline, one
// round trip): the replication stream is in the master's order, so a
// replica that has the marker has everything the master took before it.
//
// The error wraps ErrNotReplicated when replicas did not confirm in time
// and ErrUnreachable when a node could not be asked; either way the caller
// must not report the writes as stored (503, or a retry).
func (a *Acker) Wait(ctx context.Context, keys ...string) error {
	if !a.Enabled() {
		return nil
	}
	keys = append(keys, recorded(ctx)...)
	nodes, err := a.nodes(ctx, keys)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if len(nodes) == 1 {
		return a.waitNode(ctx, nodes[0])
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = a.waitNode(ctx, n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// node is one master to confirm writes on, with a marker key it owns.
type node struct {
	client redis.Cmdable
	addr   string
	marker string
}

// nodes resolves the masters of keys: the client itself unless it is a
// cluster client.
func (a *Acker) nodes(ctx context.Context, keys []string) ([]node, error) {
	cc, ok := a.rdb.(*redis.ClusterClient)
	if !ok {
		return []node{{client: a.rdb, addr: addrOf(a.rdb), marker: Marker("")}}, nil
	}
	if len(keys) == 0 {
		keys = []string{Marker("")}
	}
	var out []node
	seen := map[string]bool{}
	for _, k := range keys {
		c, err := cc.MasterForKey(ctx, k)
		if err != nil {
			return nil, err
		}
		addr := c.Options().Addr
		if seen[addr] {
			continue
		}
		seen[addr] = true
		out = append(out, node{client: c, addr: addr, marker: Marker(k)})
	}
	return out, nil
}

// addrOf names a non-cluster client's server for the replica cache and
// errors ("FailoverClient" for a Sentinel client: its master moves, and
// the cache entry with it after at most ReplicasTTL).
func addrOf(rdb redis.UniversalClient) string {
	if c, ok := rdb.(*redis.Client); ok {
		return c.Options().Addr
	}
	return "redis"
}

// Marker returns the marker key Wait writes for writes to key: a key of
// key's hash slot (the same hash tag), outside asynq's "asynq:" names and
// Herald's "{herald}:" ones. Without a hash tag in key it is Herald's slot.
func Marker(key string) string {
	tag := "herald"
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			tag = key[i+1 : i+1+j]
		}
	}
	if tag == "herald" {
		return "{herald}:durable:marker"
	}
	return "herald:durable:marker:{" + tag + "}"
}

// waitNode writes the marker and waits for the node's replicas.
func (a *Acker) waitNode(ctx context.Context, n node) error {
	want := a.cfg.Replicas
	if a.cfg.Auto {
		online, err := a.onlineReplicas(ctx, n)
		if err != nil {
			return fmt.Errorf("%w: %s: INFO replication: %w", ErrUnreachable, n.addr, err)
		}
		want = min(online, 1)
	}
	if want == 0 {
		return nil
	}
	pipe := n.client.Pipeline()
	pipe.Set(ctx, n.marker, a.now().UnixNano(), markerTTL)
	wait := pipe.Do(ctx, "WAIT", want, a.cfg.Timeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		a.forget(n.addr)
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, n.addr, err)
	}
	got, err := wait.Int()
	if err != nil {
		a.forget(n.addr)
		return fmt.Errorf("%w: %s: WAIT: %w", ErrUnreachable, n.addr, err)
	}
	if got < want {
		a.forget(n.addr)
		return fmt.Errorf("%w: %d of %d replicas of %s confirmed within %v", ErrNotReplicated, got, want, n.addr, a.cfg.Timeout)
	}
	return nil
}

// onlineReplicas returns how many replicas the node has online, from a
// cache at most ReplicasTTL old.
// Callers that find the cache stale while another is reading it wait for
// that read instead of sending INFO of their own: a burst of sends at the
// start would otherwise each ask.
func (a *Acker) onlineReplicas(ctx context.Context, n node) (int, error) {
	now := a.now()
	a.mu.Lock()
	c, ok := a.known[n.addr]
	if ok && now.Sub(c.at) < ReplicasTTL {
		a.mu.Unlock()
		return c.n, nil
	}
	if busy, reading := a.reading[n.addr]; reading {
		a.mu.Unlock()
		select {
		case <-busy:
			return a.onlineReplicas(ctx, n)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	done := make(chan struct{})
	a.reading[n.addr] = done
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.reading, n.addr)
		a.mu.Unlock()
		close(done)
	}()
	info, err := n.client.Info(ctx, "replication").Result()
	var online int
	switch {
	case err == nil:
		online = OnlineReplicas(info)
	case !unsupported(err):
		return 0, err
	}
	// A server that does not report replication (an in-memory stand-in
	// such as Herald's local mode) has no replicas to wait for.
	a.mu.Lock()
	a.known[n.addr] = replicaCount{n: online, at: now}
	a.mu.Unlock()
	return online, nil
}

// unsupported reports an error reply by which the server says it does not
// know a command or section, as opposed to refusing it (NOPERM) or being
// unable to answer now (LOADING, network errors).
func unsupported(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	return strings.HasPrefix(msg, "ERR unknown") || strings.Contains(msg, "not supported")
}

// forget drops the cached replica count of addr, so that the next wait
// reads it again (a replica may have gone).
func (a *Acker) forget(addr string) {
	a.mu.Lock()
	delete(a.known, addr)
	a.mu.Unlock()
}

// OnlineReplicas counts the replicas in state "online" in the text of INFO
// replication ("slave0:ip=...,port=...,state=online,offset=...,lag=0"). A
// replica still loading its first copy is not online: WAIT would stall on it.
func OnlineReplicas(info string) int {
	n := 0
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		name, fields, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "slave") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimPrefix(name, "slave")); err != nil {
			continue
		}
		for f := range strings.SplitSeq(fields, ",") {
			if f == "state=online" {
				n++
			}
		}
	}
	return n
}
