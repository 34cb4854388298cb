package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// TestUnpaidAskKeepsTheFreeWindows: while a paid schedule fills the bot's
// log far above the free limit, an unpaid ask (an edit, which cannot carry
// allow_paid_broadcast) gets a slot with fewer than Free sends in the span
// before it and Paid false, and the paid asks after it are placed after
// it, paid again. Both kinds of bot log: one read by rank (append-only,
// 100 per 500ms) and one small enough to take slots between others (20
// per 100ms), whose gap before the unpaid slot must stay empty.
func TestUnpaidAskKeepsTheFreeWindows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		free, paid ratelimit.Limit
	}{
		{"append-only", ratelimit.Per(5, 500*time.Millisecond), ratelimit.Per(100, 500*time.Millisecond)},
		{"fit", ratelimit.Per(5, 100*time.Millisecond), ratelimit.Per(20, 100*time.Millisecond)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, ratelimit.Config{Bot: c.free, Private: ratelimit.Unlimited,
				Group: ratelimit.Unlimited, SleepMax: 2 * time.Second, Guard: 2 * time.Millisecond})
			span := c.free[0].Per
			b.lim = b.lim.WithPaid(ratelimit.Paid{Limit: c.paid, Free: c.free[0].N, FreePer: span})
			ask := func(id string, unpaid bool) (time.Time, ratelimit.Decision) {
				t.Helper()
				d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: id, Queue: "default", TaskID: id, Ahead: true, Unpaid: unpaid})
				if err != nil {
					t.Fatal(err)
				}
				if d.Kind != ratelimit.Go {
					t.Fatalf("ask %s: %v, want a slot ahead", id, d.Kind)
				}
				return d.At.Add(d.Wait), d
			}
			// A paid schedule reserved ahead: 2 of its spans, full.
			var before []time.Time
			for i := range 2 * c.paid[0].N {
				at, d := ask("p"+strconv.Itoa(i), false)
				if !d.Paid {
					t.Fatalf("paid ask %d: Paid false", i)
				}
				before = append(before, at)
			}
			edit, d := ask("edit", true)
			if d.Paid || d.Charged {
				t.Fatalf("unpaid ask: paid=%v charged=%v", d.Paid, d.Charged)
			}
			var after []time.Time
			for i := range c.paid[0].N {
				at, d := ask("q"+strconv.Itoa(i), false)
				if !d.Paid {
					t.Fatalf("paid ask %d after the unpaid one: Paid false", i)
				}
				if !at.After(edit) {
					t.Fatalf("paid ask %d after the unpaid one got %v, before its slot %v", i, at, edit)
				}
				after = append(after, at)
			}
			in := 0
			for _, at := range append(before, after...) {
				if at.Before(edit) && edit.Sub(at) < span {
					in++
				}
			}
			if in >= c.free[0].N {
				t.Fatalf("%d sends in the %v before the unpaid slot; the free limit is %s", in, span, c.free)
			}
			// The paid schedule resumes at the paid rate after it.
			if gap := after[len(after)-1].Sub(after[0]); gap > c.paid[0].Per {
				t.Fatalf("the %d paid sends after the unpaid one span %v, want the paid rate (%s)", len(after), gap, c.paid)
			}
		})
	}
}
