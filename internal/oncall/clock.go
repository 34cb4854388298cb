package oncall

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Clock is a time of day on a 24-hour wall clock, such as 09:00: when a
// rotation hands off.
type Clock struct {
	Hour   int // 0 to 23
	Minute int // 0 to 59
}

// ParseClock reads "HH:MM" on a 24-hour clock ("09:00", "9:00", "23:30").
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if ok && len(h) >= 1 && len(h) <= 2 && len(m) == 2 && isDigits(h) && isDigits(m) {
		hh, _ := strconv.Atoi(h)
		mm, _ := strconv.Atoi(m)
		if hh < 24 && mm < 60 {
			return Clock{Hour: hh, Minute: mm}, nil
		}
	}
	return Clock{}, fmt.Errorf("%q is not a time of day", s)
}

// String prints the clock as HH:MM.
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// valid reports whether c is a time of day.
func (c Clock) valid() bool { return c.Hour >= 0 && c.Hour < 24 && c.Minute >= 0 && c.Minute < 60 }

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// WallTime returns the instant at which the wall clock in loc reads the
// given date and time. Two days a year in a zone with daylight saving time
// need a rule, and WallTime's is the one of RFC 5545 (iCalendar, section
// 3.3.5):
//
//   - a time the clocks skip (02:30 in Berlin on 2026-03-29, when 02:00
//     becomes 03:00) is read with the offset in effect before the gap, so
//     it falls as far after the gap's start as it was meant to: 02:30 CET,
//     which the clocks show as 03:30 CEST (01:30 UTC);
//   - a time the clocks show twice (02:30 in Berlin on 2026-10-25, when
//     03:00 goes back to 02:00) is the first of the two: 02:30 CEST
//     (00:30 UTC), not 02:30 CET.
//
// time.Date alone promises neither: for a skipped time it moves forward in
// zones east of Greenwich and backward in zones west of it (02:30 in
// New York on 2026-03-08 becomes 01:30 EST), and which of two readings it
// picks depends on the zone's offsets in the same way. WallTime starts
// from time.Date's answer and corrects it to the rule above, the same in
// every zone.
func WallTime(y int, m time.Month, d, hour, minute int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, hour, minute, 0, 0, loc)
	want := time.Date(y, m, d, hour, minute, 0, 0, time.UTC)
	if !reads(t, want) {
		// A skipped time: time.Date read it with one of the offsets on
		// either side of the gap. Read with the one before (the smaller,
		// since the clocks went forward), it comes out later.
		_, off := t.Zone()
		if alt := want.Add(-time.Duration(off) * time.Second); alt.After(t) {
			return alt.In(loc)
		}
		return t
	}
	// A time the clocks may show twice: the reading with the offset of the
	// zone period before t's, when it shows the same time and comes
	// earlier, is the first of the two.
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return t
	}
	_, prev := start.Add(-time.Second).Zone()
	if alt := want.Add(-time.Duration(prev) * time.Second).In(loc); alt.Before(t) && reads(alt, want) {
		return alt
	}
	return t
}

// reads reports whether t, in its own location, shows the date, hour and
// minute of want (a time in UTC standing for a wall-clock reading).
func reads(t, want time.Time) bool {
	y, m, d := t.Date()
	wy, wm, wd := want.Date()
	return y == wy && m == wm && d == wd && t.Hour() == want.Hour() && t.Minute() == want.Minute()
}
