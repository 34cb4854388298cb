package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// NotPrimaryError reports that the server Herald writes to is a replica:
// every write would be refused with READONLY.
type NotPrimaryError struct {
	Addr   string // the server asked ("FailoverClient" through Sentinel)
	Role   string // what ROLE answered: "slave" (a replica) or "sentinel"
	Master string // the master it replicates, host:port, when known
}

func (e *NotPrimaryError) Error() string {
	if e.Role != "slave" {
		return fmt.Sprintf("redis at %s answers ROLE %q, not \"master\"", e.Addr, e.Role)
	}
	msg := fmt.Sprintf("redis at %s is a read-only replica, not a master", e.Addr)
	if e.Master != "" {
		msg += " (it replicates " + e.Master + ")"
	}
	return msg
}

// CheckPrimary asks the server Herald writes to for its ROLE and returns a
// *NotPrimaryError when it is not a master; on a Cluster it asks the master
// of Herald's own slot, and a node that has become a replica also makes the
// client reload its slot map. Other errors are Redis being unreachable.
func CheckPrimary(ctx context.Context, rdb redis.UniversalClient) error {
	var c interface {
		Do(ctx context.Context, args ...any) *redis.Cmd
	} = rdb
	addr := addrOf(rdb)
	cc, cluster := rdb.(*redis.ClusterClient)
	if cluster {
		n, err := cc.MasterForKey(ctx, Marker(""))
		if err != nil {
			return err
		}
		c, addr = n, n.Options().Addr
	}
	res, err := c.Do(ctx, "ROLE").Slice()
	switch {
	case err != nil && unsupported(err):
		// The server answered but keeps its role to itself (an in-memory
		// stand-in): as reachable as a PING would say.
		return nil
	case err != nil:
		return err
	case len(res) == 0:
		return fmt.Errorf("redis at %s answered ROLE with nothing", addr)
	}
	role, _ := res[0].(string)
	if role == "master" {
		return nil
	}
	e := &NotPrimaryError{Addr: addr, Role: role}
	if role == "slave" && len(res) >= 3 {
		e.Master = fmt.Sprintf("%v:%v", res[1], res[2])
	}
	if cluster {
		cc.ReloadState(ctx)
	}
	return e
}

// Watch checks every interval, until ctx ends, that rdb writes to a
// master, and logs one line when it stops doing so (error level, with hint
// saying what to configure) and one when it does again. An unreachable
// Redis is not reported here: the failing requests report it.
func Watch(ctx context.Context, rdb redis.UniversalClient, interval time.Duration, hint string, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var down bool
	for {
		cctx, cancel := context.WithTimeout(ctx, interval)
		err := CheckPrimary(cctx, rdb)
		cancel()
		var np *NotPrimaryError
		switch {
		case errors.As(err, &np) && !down:
			down = true
			log.Error("redis refuses writes: "+np.Error()+"; nothing can be stored until this is fixed", "fix", hint)
		case err == nil && down:
			down = false
			log.Info("redis accepts writes again", "redis", addrOf(rdb))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
