package broadcast

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// cancelChunk is how many cancel marks one pipeline of Cancel writes.
const cancelChunk = 1000

// Cancel stops every message of broadcast id that is not settled yet: it
// puts the ledger's cancel mark on each (keys.Space.Cancel, what DELETE
// /v1/messages/{id} puts on a message a worker holds), pipelined. The
// limiter reads the mark in the same script that would give the message
// its send slot, so a worker settles each marked message as cancelled
// when it reaches it and sends none of them; a message whose send has
// begun goes out. The status it returns counts the marked messages as
// cancelling. by names who cancelled (the token), may is as for Status.
func (s *Service) Cancel(ctx context.Context, id, by string, may func(from string) bool) (Status, error) {
	rec, list, err := s.find(ctx, id, may)
	if err != nil {
		return Status{}, err
	}
	c, open, err := s.scan(ctx, rec, list)
	if err != nil {
		return Status{}, err
	}
	if err := s.mark(ctx, rec.Bot, open, by); err != nil {
		return Status{}, unavailable(fmt.Errorf("cancel broadcast %s: %w", id, err))
	}
	// The marked messages that wait in Redis for their slots go to the
	// head of the queue now: a worker settles each as cancelled at once
	// (one limiter call, no request) rather than when its slot would have
	// come, so the counts settle in seconds. The marks alone already stop
	// every send: a failure here only leaves them to settle when their
	// slots come, so it does not fail the cancel.
	_, _ = broker.PromoteNow(ctx, s.rdb, rec.Queue, open)
	c.Queued -= len(open)
	c.Cancelling += len(open)
	return s.status(ctx, rec, list, c)
}

// mark writes the cancel marks of the task ids, for the ledger's
// retention.
func (s *Service) mark(ctx context.Context, bot string, ids []string, by string) error {
	if len(ids) == 0 {
		return nil
	}
	ks := keys.Bot(bot)
	durable.Wrote(ctx, ks.Cancel(ids[0]))
	ttl := s.ledger.Retention()
	for start := 0; start < len(ids); start += cancelChunk {
		part := ids[start:min(start+cancelChunk, len(ids))]
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range part {
				p.Set(ctx, ks.Cancel(id), by, ttl)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Workers holding marked messages in memory look at their marks now;
	// a lost notice only leaves them to their slots.
	_ = s.rdb.Publish(ctx, keys.StopChannel(), bot).Err()
	return nil
}
