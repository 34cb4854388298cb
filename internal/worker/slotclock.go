package worker

import (
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// clockSlack is how far the limiter's clock may seem to lie outside the
// round trip that asked it before slotOnClock stops trusting it: Redis
// reports microseconds, so a script that ran within the microsecond the
// worker asked in can seem to have run a little before the ask.
const clockSlack = time.Millisecond

// slotOnClock places the slot of a decision asked for at asked and
// answered at replied on this worker's clock: wake is the earliest time
// the send may leave (it never comes before the slot), due the time its
// lateness counts from.
//
// The script decided at dc.At by Redis' clock, somewhere between the ask
// and the reply. When that time falls inside the round trip by this
// worker's clock too, the two clocks agree (one host, or hosts kept in
// step) and the slot is exactly dc.At plus the wait: the worker wakes at
// it and counts its lateness from it, however long the reply took. When
// it does not, the clocks disagree and the slot is only known to lie
// between asked and replied plus the wait: the worker wakes at the later
// end, never early, and counts lateness from the earlier one, never
// letting a send go later than the guard allows. Waking at the earlier
// end sent a burst's sends early by the script's time in a busy Redis;
// counting lateness from the later one let a send whose reply took 45 ms
// go 50 ms after its slot, closer than the window to the sends reserved
// after it (the strict fake answered 429 to both).
func slotOnClock(asked, replied time.Time, dc ratelimit.Decision) (wake, due time.Time) {
	at := dc.At
	if at.IsZero() || at.Before(asked.Add(-clockSlack)) || at.After(replied.Add(clockSlack)) {
		return replied.Add(dc.Wait), asked.Add(dc.Wait)
	}
	switch {
	case at.Before(asked):
		at = asked
	case at.After(replied):
		at = replied
	}
	slot := at.Add(dc.Wait)
	return slot, slot
}
