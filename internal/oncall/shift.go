package oncall

import "time"

// Shift is a span of absolute time, [Start, End), during which one person
// is on call without a break.
//
// A zero Start or End is an end that is not in sight: a shift that began
// more than Horizon before the time asked about, or lasts more than
// Horizon after it (a layer of one user, say), has it zero.
type Shift struct {
	Start time.Time
	End   time.Time
}

// Contains reports whether t is within the shift.
func (s Shift) Contains(t time.Time) bool {
	return (s.Start.IsZero() || !t.Before(s.Start)) && (s.End.IsZero() || t.Before(s.End))
}

// Duration is the shift's length in absolute time, 0 when an end is not
// in sight.
func (s Shift) Duration() time.Duration {
	if s.Start.IsZero() || s.End.IsZero() {
		return 0
	}
	return s.End.Sub(s.Start)
}

// Horizon is how far from the time asked about a schedule looks for the
// start and end of a shift, and for the next one.
const Horizon = 366 * 24 * time.Hour

// The sentinels standing for unbounded ends inside the package.
var (
	farPast   = time.Time{}
	farFuture = time.Date(9999, time.December, 31, 0, 0, 0, 0, time.UTC)
)

// exported turns sentinel ends into the zero times of Shift.
func exported(lo, hi time.Time) Shift {
	var s Shift
	if lo.After(farPast) {
		s.Start = lo
	}
	if hi.Before(farFuture) {
		s.End = hi
	}
	return s
}
