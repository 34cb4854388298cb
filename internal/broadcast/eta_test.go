package broadcast_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// TestETAFollowsThePublishedPacing: a broadcast's ETA comes from the pacing
// the bot's workers published: the paid limit while paid broadcasts are on,
// less the share a lane leaves the other queues, and the free limit once
// they are off. Before any worker published, it is the producer's own
// HERALD_LIMIT_BOT.
func TestETAFollowsThePublishedPacing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	res, err := f.svc.Create(ctx, broadcast.Request{Chats: chatList(1000, 5000), Text: "news", From: "app"})
	if err != nil {
		t.Fatal(err)
	}
	eta := func(stage string, want float64) {
		t.Helper()
		st, err := f.svc.Status(ctx, res.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.ETASeconds == nil || *st.ETASeconds != want {
			t.Errorf("%s: ETA %v s, want %.1f", stage, st.ETASeconds, want)
		}
	}
	eta("no pacing published", 166.6) // 5,000 at the default 30/s

	lim, err := ratelimit.New(f.rdb, ratelimit.Config{Bot: ratelimit.Per(30, time.Second), Lanes: []string{jobs.QueueBroadcast}})
	if err != nil {
		t.Fatal(err)
	}
	if err := lim.WithPaid(ratelimit.Paid{Limit: ratelimit.Per(1000, time.Second), Free: 30}).Publish(ctx); err != nil {
		t.Fatal(err)
	}
	eta("paid broadcasts on, a lane", 5.1) // 5,000 at 970/s

	if err := f.rdb.Set(ctx, keys.Bot("").PaidOff(), "budget", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	eta("paid broadcasts off for now", 172.4) // 5,000 at 29/s

	if err := lim.Publish(ctx); err != nil { // a worker without paid broadcasts
		t.Fatal(err)
	}
	eta("no paid broadcasts", 172.4)
}
