package broadcast

import (
	"context"
	"fmt"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// Cancel stops every message of broadcast id that is not settled yet: it
// puts the ledger's cancel mark on each (keys.Space.Cancel, what DELETE
// /v1/messages/{id} puts on a message a worker holds), a thousand per
// script call, which counts them as cancelling (ledger.Store.MarkCancelled).
// The limiter reads the mark in the same script that would give the
// message its send slot, so a worker settles each marked message as
// cancelled when it reaches it and sends none of them; a message whose
// send has begun goes out. by names who cancelled (the token), may is as
// for Status.
func (s *Service) Cancel(ctx context.Context, id, by string, may func(from string) bool) (Status, error) {
	rec, err := s.load(ctx, id, may)
	if err != nil {
		return Status{}, err
	}
	list, err := s.store.chats(ctx, id)
	if err != nil {
		return Status{}, unavailable(err)
	}
	ids := taskIDs(rec, list)
	if len(ids) > 0 {
		durable.Wrote(ctx, keys.Bot(rec.Bot).Cancel(ids[0]))
	}
	open, err := s.ledger.MarkCancelled(ctx, rec.Bot, rec.ID, ids, by)
	if err != nil {
		return Status{}, unavailable(fmt.Errorf("cancel broadcast %s: %w", id, err))
	}
	if len(open) > 0 {
		// Workers holding marked messages in memory look at their marks
		// now; a lost notice only leaves them to their slots.
		_ = s.rdb.Publish(ctx, keys.StopChannel(), rec.Bot).Err()
	}
	// The marked messages that wait in Redis for their slots go to the
	// head of the queue now: a worker settles each as cancelled at once
	// (one limiter call, no request) rather than when its slot would have
	// come, so the counts settle in seconds. The marks alone already stop
	// every send: a failure here only leaves them to settle when their
	// slots come, so it does not fail the cancel.
	_, _ = broker.PromoteNow(ctx, s.rdb, rec.Queue, open)
	return s.Status(ctx, id, nil)
}
