package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// chatsN is n private chats, "1" to "n".
func chatsN(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// chargedIn counts the sends that had more than free sends in the span up
// to them (themselves included): the ones Telegram bills.
func chargedIn(times []time.Time, free int, span time.Duration) int {
	n := 0
	for i, at := range times {
		in := 0
		for j := i; j >= 0 && at.Sub(times[j]) < span; j-- {
			in++
		}
		if in > free {
			n++
		}
	}
	return n
}

// TestPaidRateKeepsEveryWindow: a bot with a paid limit of 60 sends per
// 200ms (its log read by rank, append-only) and a free one of 6, 600
// messages from 8 concurrent senders with slots handed out ahead and a
// priority queue: every window holds at the paid rate, every decision says
// Paid, and the charged count agrees with the schedule (it may count a
// decision whose slot moved twice, never fewer).
func TestPaidRateKeepsEveryWindow(t *testing.T) {
	t.Parallel()
	charged, times := simulate(t, sim{ahead: true, prio: true, messages: 600, workers: 8,
		paid: ratelimit.Per(60, 200*time.Millisecond), chats: chatsN(120)})
	want := chargedIn(times, 6, 200*time.Millisecond)
	if want == 0 || charged < want || charged > want+want/10 {
		t.Fatalf("charged %d decisions; the schedule has %d sends beyond the free 6 per 200ms", charged, want)
	}
	t.Logf("600 sends over %v, %d charged", times[len(times)-1].Sub(times[0]), charged)
}

// TestStopPaidFallsBackToTheFreeLimit: once StopPaid turns a bot's paid
// broadcasts off, the slots it reserved ahead at the paid rate are given up
// and every send from then on keeps the free limit, with Paid false.
func TestStopPaidFallsBackToTheFreeLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, ratelimit.Config{Bot: ratelimit.Per(5, 500*time.Millisecond), Private: ratelimit.Unlimited,
		Group: ratelimit.Unlimited, SleepMax: time.Second, Guard: 2 * time.Millisecond})
	b.lim = b.lim.WithPaid(ratelimit.Paid{Limit: ratelimit.Per(100, 500*time.Millisecond), Free: 5, FreePer: 500 * time.Millisecond})
	// A burst reserves paid slots ahead.
	var ahead []ratelimit.Decision
	for i := range 40 {
		d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: strconv.Itoa(i), Queue: "default", TaskID: "a" + strconv.Itoa(i), Ahead: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind != ratelimit.Go || !d.Paid {
			t.Fatalf("paid burst: %v paid=%v", d.Kind, d.Paid)
		}
		ahead = append(ahead, d)
	}
	until := time.Now().Add(time.Hour)
	if err := b.lim.StopPaid(b.ctx, until, "balance"); err != nil {
		t.Fatal(err)
	}
	st, err := b.lim.PaidState(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Configured || st.On || st.Reason != "balance" || st.Until.Sub(until).Abs() > time.Minute {
		t.Fatalf("state after StopPaid: %+v", st)
	}
	// The slots ahead are gone: Confirm sends their tasks back.
	last := ahead[len(ahead)-1]
	if k, err := b.lim.Confirm(b.ctx, "39", "a39", last); err != nil || k != ratelimit.Again {
		t.Fatalf("confirm of a paid slot ahead after StopPaid: %v %v", k, err)
	}
	var times []time.Time
	for i := range 12 {
		at, d, err := b.sendOne(ratelimit.Ask{Chat: "x" + strconv.Itoa(i), Queue: "default", TaskID: "b" + strconv.Itoa(i), Ahead: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Paid || d.Charged {
			t.Fatalf("send %d after StopPaid: paid=%v charged=%v", i, d.Paid, d.Charged)
		}
		times = append(times, at)
	}
	for i := 5; i < len(times); i++ {
		if gap := times[i].Sub(times[i-5]); gap < 500*time.Millisecond {
			t.Fatalf("after StopPaid sends %d and %d are %v apart; the free limit is 5 per 500ms", i-5, i, gap)
		}
	}
}

// TestBudgetStopsPaid: a budget of 1 Star pays for 10 charged sends. The
// charged decisions hold them until the workers count the sends made
// (CountCharged); a task decided again holds one still; while sends and
// holds reach the budget the decisions are free, and once the counted
// sends do, paid broadcasts are off until midnight with the reason
// "budget", and the day's count says what was counted.
func TestBudgetStopsPaid(t *testing.T) {
	t.Parallel()
	b := setup(t, ratelimit.Config{Bot: ratelimit.Per(3, time.Second), Private: ratelimit.Unlimited,
		Group: ratelimit.Unlimited, SleepMax: time.Second, Guard: 2 * time.Millisecond})
	b.lim = b.lim.WithPaid(ratelimit.Paid{Limit: ratelimit.Per(100, time.Second), Free: 3, Budget: 1})
	paid := 0
	var charged []ratelimit.ChargedSend
	for i := range 30 {
		task := "t" + strconv.Itoa(i)
		d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: strconv.Itoa(i), Queue: "default", TaskID: task, Ahead: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Paid {
			paid++
		}
		if d.Charged && len(charged) == 0 {
			// Its slot given up (it woke too late) and asked again: still
			// one hold.
			again, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: strconv.Itoa(i), Queue: "default", TaskID: task, Ahead: true, Resume: d.Resume})
			if err != nil || !again.Paid || !again.Charged {
				t.Fatalf("charged decision asked again: %+v %v", again, err)
			}
			d = again
		}
		if d.Charged {
			charged = append(charged, ratelimit.ChargedSend{TaskID: task, Resume: d.Resume})
		}
	}
	st, err := b.lim.PaidState(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 3 free sends, then 10 charged ones; the rest go at the free limit.
	if paid != 13 || len(charged) != 10 || st.ChargedToday != 0 {
		t.Fatalf("after the budget: %d paid decisions, %d charged, state %+v", paid, len(charged), st)
	}
	// The workers count the sends they made, each checked against the log
	// (all 10 went at their slots); the holds end, the count is the
	// budget's and paid broadcasts are off until midnight.
	if _, err := b.rdb.Pipelined(b.ctx, func(p redis.Pipeliner) error {
		b.lim.CountCharged(b.ctx, p, int64(len(charged)), charged)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "x", Queue: "default", TaskID: "after", Ahead: true}); err != nil {
		t.Fatal(err)
	}
	if st, err = b.lim.PaidState(b.ctx); err != nil || st.ChargedToday != 10 || st.Stars() != 1 || st.On || st.Reason != "budget" {
		t.Fatalf("after the sends were counted: %+v (%.1f Stars) %v", st, st.Stars(), err)
	}
	if n, err := b.rdb.ZCard(b.ctx, keys.Bot("").PaidHolds()).Result(); err != nil || n != 0 {
		t.Fatalf("%d holds left after the sends were counted (%v)", n, err)
	}
	if d := time.Until(st.Until); d <= 0 || d > 24*time.Hour {
		t.Fatalf("budget fallback ends in %v, want at the next UTC midnight", d)
	}
}

// TestPaidSlotAfterTheSwitchKeepsTheFreeWindow: slots handed out ahead at
// the paid rate, then paid broadcasts go off (the budget's mark). A task
// that gave its paid slot up and asks again must not be sent without the
// flag where the paid rate put it, in a second that already holds more
// than the free sends: it gets a slot where the free windows hold over
// every send of the log, with Paid false.
func TestPaidSlotAfterTheSwitchKeepsTheFreeWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, ratelimit.Config{Bot: ratelimit.Per(3, time.Second), Private: ratelimit.Unlimited,
		Group: ratelimit.Unlimited, SleepMax: time.Second, Guard: 2 * time.Millisecond})
	b.lim = b.lim.WithPaid(ratelimit.Paid{Limit: ratelimit.Per(100, time.Second), Free: 3})
	var ds []ratelimit.Decision
	for i := range 20 {
		d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: strconv.Itoa(i), Queue: "default", TaskID: "t" + strconv.Itoa(i), Ahead: true})
		if err != nil || d.Kind != ratelimit.Go || !d.Paid {
			t.Fatalf("paid burst %d: %+v %v", i, d, err)
		}
		ds = append(ds, d)
	}
	last := ds[len(ds)-1]
	lastSlot := last.At.Add(last.Wait)
	if err := b.rdb.Set(b.ctx, keys.Bot("").PaidOff(), "budget", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	// Task t10 woke too late for its slot and asks again with it.
	d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "10", Queue: "default", TaskID: "t10", Ahead: true, Resume: ds[10].Resume})
	if err != nil {
		t.Fatal(err)
	}
	if d.Paid || d.Charged {
		t.Fatalf("after the switch: %+v, want a free decision", d)
	}
	slot := d.At.Add(d.Wait)
	// The free window of 3 a second holds over the 19 paid slots still
	// reserved: a second after the third newest of them, at the earliest.
	third := ds[len(ds)-3]
	if min := third.At.Add(third.Wait).Add(time.Second); slot.Before(min) {
		t.Fatalf("free slot at %v after the last paid one, want at least %v after it",
			slot.Sub(lastSlot), min.Sub(lastSlot))
	}
}
