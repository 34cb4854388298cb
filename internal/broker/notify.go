package broker

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Notify tells idle workers that queue has a new task: it pushes one token on
// the wake list, which wakes exactly one idle worker. The list is kept short:
// tokens that no idle worker took (the fleet was busy) are stale anyway,
// since busy workers dequeue again as soon as they finish.
func Notify(ctx context.Context, rdb redis.Cmdable, queue string) error {
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, keys.WakeList(), queue)
		p.LTrim(ctx, keys.WakeList(), 0, wakeListMax-1)
		return nil
	})
	return err
}

const wakeListMax = 16
