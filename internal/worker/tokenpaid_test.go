package worker_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// TestPaidOnlyForTokensThatMaySpend: with paid broadcasts on, the messages
// of a token without the paid permission go at the free rate, none of them
// charged; those of a token with it go as paid broadcasts.
func TestPaidOnlyForTokensThatMaySpend(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 1000}})
	const n = 60
	store := func(from int, paid bool) {
		items := make([]jobs.BatchItem, n)
		for i := range n {
			chat := strconv.Itoa(from + i)
			items[i] = jobs.BatchItem{TaskID: keys.BroadcastTaskID(testBroadcast, chat),
				Message: jobs.SendMessage{Chat: chat, Text: "news " + chat, CreatedAt: time.Now(), From: "news", Paid: paid}}
		}
		if _, err := b.enq.EnqueueBatch(b.ctx, "default", items); err != nil {
			t.Fatal(err)
		}
	}
	store(1000, false)
	if err := b.fake.Wait(b.ctx, n); err != nil {
		t.Fatalf("waiting: %v (stats %+v)", err, b.fake.Stats())
	}
	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidSends != 0 || st.ChargedSends != 0 {
		t.Fatalf("a token without the paid permission: %+v", st)
	}
	if most := busiestWindow(b.fake.Messages(), time.Second); most > 30 {
		t.Errorf("%d sends in one Telegram second without the paid permission", most)
	}
	store(5000, true)
	if err := b.fake.Wait(b.ctx, 2*n); err != nil {
		t.Fatalf("waiting: %v (stats %+v)", err, b.fake.Stats())
	}
	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidSends != n {
		t.Fatalf("a token with the paid permission: %+v", st)
	}
}
