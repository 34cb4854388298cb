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
// (internal/quota), in the bucket of its creation time, with the other
// messages the process settles in the next quota.DefaultReleaseEvery
// (quota.Releases): only for messages a token sent.
type quotaRelease struct {
	next     broker.Handler
	releases *quota.Releases
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
	q.releases.Settled(f.From, t.Queue == jobs.QueueBroadcast, f.CreatedAt)
	return err
}
