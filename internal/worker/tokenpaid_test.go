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
// charged; those of a token with it go as paid broadcasts, and the Stars
// they cost are counted under its name (herald_token_stars_spent_total).
func TestPaidOnlyForTokensThatMaySpend(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 1000}})
	const n = 60
	store := func(from int, token string, paid bool) {
		items := make([]jobs.BatchItem, n)
		for i := range n {
			chat := strconv.Itoa(from + i)
			items[i] = jobs.BatchItem{TaskID: keys.BroadcastTaskID(testBroadcast, chat),
				Message: jobs.SendMessage{Chat: chat, Text: "news " + chat, CreatedAt: time.Now(), From: token, Paid: paid}}
		}
		if _, err := b.enq.EnqueueBatch(b.ctx, "default", items); err != nil {
			t.Fatal(err)
		}
	}
	store(1000, "news", false)
	if err := b.fake.Wait(b.ctx, n); err != nil {
		t.Fatalf("waiting: %v (stats %+v)", err, b.fake.Stats())
	}
	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidSends != 0 || st.ChargedSends != 0 {
		t.Fatalf("a token without the paid permission: %+v", st)
	}
	if most := busiestWindow(b.fake.Messages(), time.Second); most > 30 {
		t.Errorf("%d sends in one Telegram second without the paid permission", most)
	}
	store(5000, "promo", true)
	if err := b.fake.Wait(b.ctx, 2*n); err != nil {
		t.Fatalf("waiting: %v (stats %+v)", err, b.fake.Stats())
	}
	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidSends != n {
		t.Fatalf("a token with the paid permission: %+v", st)
	}
	// The fake answers before the worker counts the send it accepted: the
	// counters may be a send behind the fake (and the token's a step
	// ahead of the bot's) for a moment.
	var bot, promo, news float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		bot = b.counter(t, "herald_paid_stars_spent_total", map[string]string{"bot": "default"})
		promo = b.counter(t, "herald_token_stars_spent_total", map[string]string{"token": "promo"})
		news = b.counter(t, "herald_token_stars_spent_total", map[string]string{"token": "news"})
		if promo == bot || time.Now().After(deadline) {
			break
		}
	}
	if promo != bot || news != 0 || (b.fake.Stats().ChargedSends > 0 && promo == 0) {
		t.Errorf("Stars by token: promo %v, news %v; the bot's %v, the fake charged %d", promo, news, bot, b.fake.Stats().ChargedSends)
	}
	t.Logf("the fake charged %d sends; herald_token_stars_spent_total{token=\"promo\"} = %v", b.fake.Stats().ChargedSends, promo)
}
