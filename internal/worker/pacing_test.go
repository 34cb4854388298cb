package worker_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// TestWorkerPublishesPacing: a running worker publishes each bot's pacing,
// its paid limit included, where the producer reads it for a broadcast's
// ETA.
func TestWorkerPublishesPacing(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 10}, stopped: true})
	if _, ok, err := ratelimit.ReadPacing(b.ctx, b.rdb, ""); ok || err != nil {
		t.Fatalf("before the worker runs: published %v (%v), want nothing", ok, err)
	}
	b.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, ok, err := ratelimit.ReadPacing(b.ctx, b.rdb, "")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if p.Paid.String() != paidLimit.String() || p.Bot.Rate() <= 0 || p.PaidOff {
				t.Fatalf("published pacing %+v, want the paid limit %s and a free one", p, paidLimit)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker published no pacing within 10 s of starting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
