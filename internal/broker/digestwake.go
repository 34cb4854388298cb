package broker

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// newDigestWakeHook returns a go-redis hook that calls notify with the queue as
// soon as asynq's aggregator has stored a digest task. The aggregator
// enqueues without Herald's wake-up, so an idle fleet would otherwise see the
// digest only after MaxIdle. asynq deletes the aggregation set right after
// the digest is stored; the hook recognises that call
// (aggregationSetDeleted) and notifies the queue.
func newDigestWakeHook(notify func(ctx context.Context, queue string)) redis.Hook {
	return digestWakeHook{notify: notify}
}

type digestWakeHook struct {
	notify func(ctx context.Context, queue string)
}

func (h digestWakeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h digestWakeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h digestWakeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil {
			if q, ok := aggregationSetDeleted(cmd); ok {
				h.notify(ctx, q)
			}
		}
		return err
	}
}
