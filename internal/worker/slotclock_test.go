package worker

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// TestSlotOnClock: a slot whose decision time lies inside the round trip
// is woken to exactly and late from itself, however slow the reply; one
// whose decision time the worker's clock cannot place is woken to at the
// latest it could be and late from the earliest.
func TestSlotOnClock(t *testing.T) {
	asked := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	replied := asked.Add(45 * time.Millisecond) // a busy Redis
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		name      string
		at        time.Time
		wait      time.Duration
		wake, due time.Duration // after asked
	}{
		{"clocks agree", asked.Add(ms(2)), ms(8), ms(10), ms(10)},
		{"a slot for now", asked.Add(ms(30)), 0, ms(30), ms(30)},
		{"redis' microsecond before the ask", asked.Add(-300 * time.Microsecond), ms(8), ms(8), ms(8)},
		{"redis' clock behind", asked.Add(-ms(50)), ms(8), ms(53), ms(8)},
		{"redis' clock ahead", replied.Add(ms(20)), ms(8), ms(53), ms(8)},
		{"no decision time", time.Time{}, ms(8), ms(53), ms(8)},
	} {
		wake, due := slotOnClock(asked, replied, ratelimit.Decision{Kind: ratelimit.Go, At: c.at, Wait: c.wait})
		if got := wake.Sub(asked); got != c.wake {
			t.Errorf("%s: wakes %v after the ask, want %v", c.name, got, c.wake)
		}
		if got := due.Sub(asked); got != c.due {
			t.Errorf("%s: late from %v after the ask, want %v", c.name, got, c.due)
		}
	}
}
