package redisconn

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterReloadInterval is how often a cluster client Herald builds
// reloads the slot map while it is in use (go-redis's default is a
// minute); a refused connection or READONLY reloads it at once.
const clusterReloadInterval = time.Second

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
