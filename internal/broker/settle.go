package broker

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// settleTimeout bounds a settling script run on a context whose
// cancellation settleHook set aside.
const settleTimeout = 5 * time.Second

// newSettleHook lets asynq's scripts that take a task out of its queue's
// active list (done, mark as complete, retry, archive, requeue) run when
// their context is already cancelled.
//
// When such a write fails (the queue's Redis node is down, or failing
// over), asynq v0.26 hands it to its syncer, which tries again every few
// seconds until the task's lease deadline, but with the context of the
// first try, which was cancelled as soon as that try returned: every later
// try fails at once. The task then stays active until its lease runs out
// and it is recovered (the lease sweeper, 15 s; asynq's recoverer, up to
// 90 s), although Redis was back within seconds. The hook gives such a
// script a context that keeps the values of the original but not its
// cancellation, bounded by settleTimeout; a context past its deadline is
// left alone (the syncer drops those requests anyway). Running the script
// late is safe: it finds the task gone from the active list and changes
// nothing when someone else recovered it meanwhile.
func newSettleHook() redis.Hook { return settleHook{} }

type settleHook struct{}

func (settleHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (settleHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (settleHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if errors.Is(ctx.Err(), context.Canceled) && settles(cmd) {
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
			defer cancel()
			return next(c, cmd)
		}
		return next(ctx, cmd)
	}
}

// settles reports whether cmd runs one of asynq's scripts that move a task
// out of the active list: their keys start with the queue's active list
// and lease set (done, mark as complete, requeue) or with the task's key
// and then those two (retry, archive).
func settles(cmd redis.Cmder) bool {
	if !isScript(cmd) {
		return false
	}
	args := cmd.Args()
	k := func(i int) string {
		if 3+i >= len(args) {
			return ""
		}
		s, _ := args[3+i].(string)
		return s
	}
	switch {
	case strings.HasSuffix(k(0), ":active") && strings.HasSuffix(k(1), ":lease"):
		return true
	case strings.Contains(k(0), ":t:") && strings.HasSuffix(k(1), ":active") && strings.HasSuffix(k(2), ":lease"):
		return true
	}
	return false
}
