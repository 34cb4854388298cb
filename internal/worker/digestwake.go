package worker

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// digestWakeHook wakes an idle worker as soon as asynq's aggregator has
// stored a digest task. The aggregator enqueues without Herald's wake-up, so
// an idle fleet would otherwise see the digest only after MaxIdle. asynq
// deletes the aggregation set right after the digest is stored, with a
// script on (asynq:{q}:g:<group>:<set id>, asynq:{q}:aggregation_sets); the
// hook recognises that call and notifies the queue.
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

// aggregationSetDeleted recognises asynq's DeleteAggregationSet script by its
// two keys and returns the queue.
func aggregationSetDeleted(cmd redis.Cmder) (string, bool) {
	if name := cmd.Name(); name != "evalsha" && name != "eval" {
		return "", false
	}
	args := cmd.Args()
	if len(args) < 5 {
		return "", false
	}
	if n, ok := args[2].(int); !ok || n != 2 {
		return "", false
	}
	set, _ := args[3].(string)
	sets, _ := args[4].(string)
	if !strings.HasPrefix(set, "asynq:{") || !strings.Contains(set, "}:g:") || !strings.HasSuffix(sets, "}:aggregation_sets") {
		return "", false
	}
	return asynqQueueOf(set), true
}

// asynqQueueOf returns the queue name in an asynq key "asynq:{queue}:...".
func asynqQueueOf(key string) string {
	i := strings.IndexByte(key, '{')
	j := strings.IndexByte(key, '}')
	if i < 0 || j < i {
		return ""
	}
	return key[i+1 : j]
}

var _ redis.Hook = digestWakeHook{}
