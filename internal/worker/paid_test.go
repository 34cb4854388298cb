package worker_test

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// paidLimit is the tests' paid limit: 60 sends a second, twice the free
// 30. The tests run in Telegram's own time (options.realTime), where
// Herald keeps up with it however busy the machine is, so that its count
// of the charged sends can be held to Telegram's exactly.
var paidLimit = ratelimit.Per(60, time.Second)

// broadcast sends n messages to n private chats and waits until Telegram
// has them all and the worker has counted them.
// testBroadcast is the broadcast id the paid tests' messages carry.
const testBroadcast = "bc-paidtest01"

func broadcast(t *testing.T, b *testBundle, n int) {
	t.Helper()
	// As a broadcast stores them: one batch, task ids naming the broadcast.
	items := make([]jobs.BatchItem, n)
	for i := range n {
		chat := strconv.Itoa(1000 + i)
		items[i] = jobs.BatchItem{TaskID: keys.BroadcastTaskID(testBroadcast, chat),
			Message: jobs.SendMessage{Chat: chat, Text: "announcement " + strconv.Itoa(i), CreatedAt: time.Now()}}
	}
	if _, err := b.enq.EnqueueBatch(b.ctx, "default", items); err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, n); err != nil {
		t.Fatalf("waiting for %d messages: %v (stats %+v)", n, err, b.fake.Stats())
	}
	waitCounter(t, b.ctx, b.metrics, "herald_messages_sent_total", nil, float64(n))
}

// onceEach fails unless every one of the n chats got exactly one message.
func onceEach(t *testing.T, ms []telegramfake.Message, n int) {
	t.Helper()
	per := map[int64]int{}
	for _, m := range ms {
		per[m.ChatID]++
	}
	for i := range n {
		if got := per[int64(1000+i)]; got != 1 {
			t.Fatalf("chat %d got %d messages, want 1", 1000+i, got)
		}
	}
	if len(ms) != n {
		t.Fatalf("%d messages delivered, want %d", len(ms), n)
	}
}

// busiestWindow is the most sends the fake accepted within any span.
func busiestWindow(ms []telegramfake.Message, span time.Duration) int {
	at := make([]time.Time, len(ms))
	for i, m := range ms {
		at[i] = m.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most, j := 0, 0
	for i := range at {
		for at[i].Sub(at[j]) >= span {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// checkCharged fails unless Herald's count of charged sends is the fake's
// (want, unless negative, is what the fake must have charged), and its
// Stars 0.1 of that. Herald counts from its schedule: a slot it gave up
// for waking too late (herald_ratelimit_late_slots_total; rare, but a
// busy machine makes some) stays in its log though Telegram never saw a
// send, so a send after it may look charged to Herald and free to
// Telegram, never the other way. Each such slot can add one: exact when
// no slot was late.
func checkCharged(t *testing.T, b *testBundle, want int64) {
	t.Helper()
	st := b.fake.Stats()
	if want >= 0 && st.ChargedSends != want {
		t.Errorf("the fake charged %d sends, want %d", st.ChargedSends, want)
	}
	charged := int64(b.counter(t, "herald_paid_charged_sends_total", map[string]string{"bot": "default"}))
	late := int64(b.counter(t, "herald_ratelimit_late_slots_total", nil))
	if charged < st.ChargedSends || charged > st.ChargedSends+late {
		t.Errorf("herald_paid_charged_sends_total = %d, the fake charged %d (%d late slots)", charged, st.ChargedSends, late)
	}
	if stars := b.counter(t, "herald_paid_stars_spent_total", map[string]string{"bot": "default"}); math.Abs(stars-float64(charged)*telegramfake.StarsPerCharge) > 1e-6 {
		t.Errorf("herald_paid_stars_spent_total = %v for %d charged sends", stars, charged)
	}
}

// countedCharged waits up to 5 s for the broadcast's charged count and the
// bot's count of the day to reach want, and returns them.
func countedCharged(t *testing.T, b *testBundle, want int64) (broadcast, day int64) {
	t.Helper()
	ks := keys.Bot("")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		broadcast, _ = b.rdb.Get(b.ctx, ks.BroadcastCharged(testBroadcast)).Int64()
		day, _ = b.rdb.Get(b.ctx, ks.PaidCharged()).Int64()
		if (broadcast >= want && day >= want) || time.Now().After(deadline) {
			return broadcast, day
		}
	}
}

// TestPaidBroadcastDrainsAboveTheFreeLimit: a bot with paid broadcasts
// sends faster than Telegram's free 30 a second, with no 429, every
// message once and with allow_paid_broadcast, and Herald's count of the
// charged sends is what Telegram billed.
func TestPaidBroadcastDrainsAboveTheFreeLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 1000}})
	const n = 240
	broadcast(t, b, n)
	ms := b.fake.Messages()
	onceEach(t, ms, n)
	st := b.fake.Stats()
	if st.TooMany != 0 || st.PaidSends != n || st.PaidRefused != 0 {
		t.Fatalf("fake stats: %+v", st)
	}
	if most := busiestWindow(ms, time.Second); most <= 30 {
		t.Errorf("at most %d sends in any Telegram second; paid broadcasts should pass the free 30", most)
	}
	if st.ChargedSends < n/3 {
		t.Errorf("only %d of %d sends were charged", st.ChargedSends, n)
	}
	checkCharged(t, b, -1)
	// The broadcast's own count, which its status shows as Stars, and the
	// bot's of the day: the worker adds its charged sends up and counts
	// them a moment later.
	want := int64(b.counter(t, "herald_paid_charged_sends_total", nil))
	bc, day := countedCharged(t, b, want)
	if bc != want || day != want {
		t.Errorf("the broadcast counted %d charged sends and the bot's day %d; herald_paid_charged_sends_total says %d", bc, day, want)
	}
	if got := b.counter(t, "herald_paid_sends_total", map[string]string{"bot": "default"}); got != n {
		t.Errorf("herald_paid_sends_total = %v, want %d", got, n)
	}
	if on := b.counter(t, "herald_paid_on", map[string]string{"bot": "default"}); on != 1 {
		t.Errorf("herald_paid_on = %v, want 1", on)
	}
}

// TestPaidBalanceShortFallsBack: the bot's balance pays for 20 charged
// sends; Telegram refuses the next, and the bot falls back to its free
// limit fleet-wide: one warning, one fallback counted, nothing lost,
// retried with backoff or sent twice, and no 429.
func TestPaidBalanceShortFallsBack(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 2}})
	const n = 150
	broadcast(t, b, n)
	ms := b.fake.Messages()
	onceEach(t, ms, n)
	st := b.fake.Stats()
	if st.TooMany != 0 || st.PaidRefused == 0 {
		t.Fatalf("fake stats: %+v", st)
	}
	checkCharged(t, b, 20)
	// After the first refusal every send is free and keeps the free limit.
	var last time.Time
	for _, m := range ms {
		if m.Paid && m.At.After(last) {
			last = m.At
		}
	}
	var after []telegramfake.Message
	for _, m := range ms {
		if m.At.After(last) {
			after = append(after, m)
		}
	}
	if len(after) < n/2 {
		t.Errorf("only %d messages went after the paid ones", len(after))
	}
	if most := busiestWindow(after, time.Second); most > 30 {
		t.Errorf("%d sends within a Telegram second after the fallback; the free limit is 30", most)
	}
	if got := b.counter(t, "herald_paid_fallbacks_total", map[string]string{"bot": "default", "reason": "balance"}); got != 1 {
		t.Errorf("herald_paid_fallbacks_total{reason=balance} = %v, want 1", got)
	}
	if on := b.counter(t, "herald_paid_on", map[string]string{"bot": "default"}); on != 0 {
		t.Errorf("herald_paid_on = %v, want 0", on)
	}
	// Off fleet-wide, for PaidRetryAfter.
	lim, err := ratelimit.New(b.rdb, telegramLimits())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := lim.WithPaid(ratelimit.Paid{Limit: paidLimit, Free: 30}).PaidState(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(ps.Until); ps.On || ps.Reason != "balance" || left > worker.PaidRetryAfter || left < worker.PaidRetryAfter-time.Minute {
		t.Errorf("paid state after the refusal: %+v (%v left), want off for %v", ps, left, worker.PaidRetryAfter)
	}
	for _, name := range []string{"herald_retries_total", "herald_archived_total"} {
		if got := b.counter(t, name, nil); got != 0 {
			t.Errorf("%s = %v, want 0: a refused paid send is neither", name, got)
		}
	}
	if got := strings.Count(b.logs.String(), "telegram refused a paid broadcast"); got != 1 {
		t.Errorf("%d warnings of the refusal, want 1", got)
	}
}

// TestPaidBudgetSpentFallsBack: a budget of 1 Star pays for 10 charged
// sends; then the bot sends at its free limit, says so once, and counts
// the fallback.
func TestPaidBudgetSpentFallsBack(t *testing.T) {
	t.Parallel()
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit, Budget: 1},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 100}})
	const n = 120
	broadcast(t, b, n)
	onceEach(t, b.fake.Messages(), n)
	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidRefused != 0 {
		t.Fatalf("fake stats: %+v", st)
	}
	// The budget pays for 10 charged decisions; a late one's send went at
	// the free limit instead.
	late := int64(b.counter(t, "herald_ratelimit_late_slots_total", nil))
	checkCharged(t, b, -1)
	if st := b.fake.Stats(); st.ChargedSends > 10 || st.ChargedSends+2*late < 10 {
		t.Errorf("the fake charged %d sends for a budget of 10 (%d late slots)", st.ChargedSends, late)
	}
	if got := b.counter(t, "herald_paid_fallbacks_total", map[string]string{"bot": "default", "reason": "budget"}); got != 1 {
		t.Errorf("herald_paid_fallbacks_total{reason=budget} = %v, want 1", got)
	}
	if on := b.counter(t, "herald_paid_on", map[string]string{"bot": "default"}); on != 0 {
		t.Errorf("herald_paid_on = %v, want 0", on)
	}
	if got := strings.Count(b.logs.String(), "Stars budget for paid broadcasts is spent"); got != 1 {
		t.Errorf("%d warnings of the budget, want 1", got)
	}
}
