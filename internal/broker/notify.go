package broker

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Notify tells idle workers that queue has a new task: it pushes one token on
// the wake list, which wakes exactly one idle worker. The list is kept short:
// tokens that no idle worker took (the fleet was busy) are stale anyway,
// since busy workers dequeue again as soon as they finish. Every
// trimEvery-th notice of a process trims it, so it holds at most
// wakeListMax plus trimEvery-1 tokens per process; a stale token costs one
// idle worker one empty dequeue round.
func Notify(ctx context.Context, rdb redis.Cmdable, queue string) error {
	return NotifyList(ctx, rdb, keys.WakeList(), queue)
}

// NotifyList is Notify for the workers of a server that waits on a wake
// list of its own (ServerConfig.WakeList), such as the status callbacks'
// deliverers: their tokens never wake a Telegram worker, nor theirs a
// deliverer.
func NotifyList(ctx context.Context, rdb redis.Cmdable, list, queue string) error {
	if notices.Add(1)%trimEvery != 0 {
		return rdb.LPush(ctx, list, queue).Err()
	}
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, list, queue)
		p.LTrim(ctx, list, 0, wakeListMax-1)
		return nil
	})
	return err
}

const (
	wakeListMax = 16
	trimEvery   = 8
	// MaxWakeTokens is the longest the wake list gets from one notifying
	// process.
	MaxWakeTokens = wakeListMax + trimEvery - 1
)

// notices counts this process's notices, for trimming.
var notices atomic.Uint64
