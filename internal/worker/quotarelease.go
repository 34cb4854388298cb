package worker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
)

// quotaRelease wraps the messages' handler: once a message's task ends
// (sent, failed, cancelled, dropped) it leaves its token's queued count
// (internal/quota), in the bucket of its creation time: one script, only
// for messages a token sent.
type quotaRelease struct {
	next   broker.Handler
	quotas *quota.Store
	h      *handler
}

// quotaFields are what the release reads of a payload.
type quotaFields struct {
	From      string    `json:"from"`
	CreatedAt time.Time `json:"created_at"`
}

func (q quotaRelease) Handle(ctx context.Context, t broker.Task) error {
	err := q.next.Handle(ctx, t)
	if !broker.Final(err) {
		return err
	}
	var f quotaFields
	if json.Unmarshal(t.Payload, &f) != nil || f.From == "" {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if rerr := q.quotas.Settled(rctx, f.From, t.Queue == jobs.QueueBroadcast, f.CreatedAt); rerr != nil {
		q.h.log.Warn("could not take a settled message out of its token's queued count; it leaves with its bucket", "task_id", t.ID, "error", rerr)
	}
	return err
}
