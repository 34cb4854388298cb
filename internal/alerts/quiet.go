package alerts

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// quietKeys are the keys of a route's quiet_hours: mapping.
var quietKeys = []string{"start", "end", "time_zone", "days"}

// minutesPerDay is 24:00, the latest end a window may have.
const minutesPerDay = 24 * 60

// quietHours is a route's daily window during which its non-critical
// alerts are held and delivered as one digest when the window ends.
//
// A window opens at start on each of its days and closes at the next end:
// the same day when end is after start, the next day otherwise (22:00 to
// 07:00 spans midnight). Both are wall-clock times in loc, so a window
// keeps its local hours across daylight saving changes; the night a clock
// changes it is an hour shorter or longer in absolute time. days lists the
// weekdays on which a window opens (a Friday night window runs into
// Saturday morning).
type quietHours struct {
	start, end int // minutes after local midnight; end may be 24:00
	loc        *time.Location
	days       [7]bool // indexed by time.Weekday
}

// until returns the end of the window that holds now, and false when no
// window does.
func (q *quietHours) until(now time.Time) (time.Time, bool) {
	y, m, d := now.In(q.loc).Date()
	// A window lasts at most a day (25 hours on the night clocks go back),
	// so only the windows opening today and yesterday can hold now.
	for _, back := range [...]int{0, 1} {
		day := d - back
		// Noon always exists, whatever a daylight saving change skips.
		if !q.days[time.Date(y, m, day, 12, 0, 0, 0, q.loc).Weekday()] {
			continue
		}
		opens := q.at(y, m, day, q.start)
		endDay := day
		if q.end <= q.start {
			endDay++
		}
		closes := q.at(y, m, endDay, q.end)
		if !now.Before(opens) && now.Before(closes) {
			return closes, true
		}
	}
	return time.Time{}, false
}

// at is the instant the local clock in q.loc shows minutes past midnight
// on the given day, by oncall.WallTime's rule (RFC 5545's): a time that a
// daylight saving change skips is read with the offset before the gap, so
// it moves forward by the size of the gap (02:30 on the night clocks go
// forward from 02:00 to 03:00 becomes 03:30) in every zone, west of
// Greenwich as east of it; a time the clocks show twice is the first.
func (q *quietHours) at(y int, m time.Month, d, minutes int) time.Time {
	return oncall.WallTime(y, m, d, minutes/60, minutes%60, q.loc)
}

// weekdays maps the names days: accepts to weekdays.
var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "sunday": time.Sunday,
	"mon": time.Monday, "monday": time.Monday,
	"tue": time.Tuesday, "tuesday": time.Tuesday,
	"wed": time.Wednesday, "wednesday": time.Wednesday,
	"thu": time.Thursday, "thursday": time.Thursday,
	"fri": time.Friday, "friday": time.Friday,
	"sat": time.Saturday, "saturday": time.Saturday,
}

// daysFix is the fix for a days: entry that names no weekday.
const daysFix = "use mon, tue, wed, thu, fri, sat, sun (or the full names), or a range such as mon-fri"

// parseClock reads "HH:MM" (24-hour clock) into minutes after midnight;
// allow24 admits "24:00", the end of the day.
func parseClock(s string, allow24 bool) (int, bool) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || h[0] == '+' || m[0] == '+' {
		return 0, false
	}
	switch {
	case hh < 24:
		return hh*60 + mm, true
	case hh == 24 && mm == 0 && allow24:
		return minutesPerDay, true
	}
	return 0, false
}

// parseDay reads one days: entry, a weekday or a range of them ("mon-fri",
// or "fri-mon" across the week's end), into set.
func parseDay(s string, set *[7]bool) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	from, to, isRange := strings.Cut(s, "-")
	a, ok := weekdays[strings.TrimSpace(from)]
	if !ok {
		return false
	}
	b := a
	if isRange {
		if b, ok = weekdays[strings.TrimSpace(to)]; !ok {
			return false
		}
	}
	for d := a; ; d = (d + 1) % 7 {
		set[d] = true
		if d == b {
			return true
		}
	}
}

// quietHours reads a route's quiet_hours: mapping; nil when it has
// problems (reported).
func (p *parser) quietHours(f yamlstrict.Field) *quietHours {
	m := p.Mapping(f.Value, f.Path, quietKeys)
	if m == nil {
		return nil
	}
	q := &quietHours{loc: time.UTC}
	ok := true
	clock := func(key string, allow24 bool) int {
		g, present := m[key]
		if !present {
			p.Report(f.Value, yamlstrict.Join(f.Path, key), "is missing", fmt.Sprintf("add %s: with a time such as \"07:00\"", key))
			ok = false
			return 0
		}
		s, good := p.String(g.Value, g.Path)
		if !good {
			ok = false
			return 0
		}
		v, good := parseClock(s, allow24)
		if !good {
			fix := "write a 24-hour time HH:MM such as \"22:00\", in quotes"
			if allow24 {
				fix += " (24:00 is the end of the day)"
			}
			p.Report(g.Value, g.Path, fmt.Sprintf("%q is not a time of day", s), fix)
			ok = false
		}
		return v
	}
	q.start = clock("start", false)
	q.end = clock("end", true)
	if ok && q.start == q.end {
		g := m["end"]
		p.Report(g.Value, g.Path, "equals start, so the window would be empty",
			"give end another time; for a whole day write start: \"00:00\" and end: \"24:00\"")
		ok = false
	}
	if g, present := m["time_zone"]; present {
		if s, good := p.String(g.Value, g.Path); good {
			if loc, err := oncall.LoadZone(s); err != nil {
				p.Report(g.Value, g.Path, err.Error(), "name an IANA time zone such as Europe/Berlin or America/New_York, or UTC")
				ok = false
			} else {
				q.loc = loc
			}
		} else {
			ok = false
		}
	}
	if g, present := m["days"]; present {
		items := p.OneOrList(g.Value, g.Path)
		if g.Value.Kind == yaml.SequenceNode && len(items) == 0 {
			p.Report(g.Value, g.Path, "is empty", "leave days: out for every day, or list the days the window starts on")
			ok = false
		}
		for _, n := range items {
			s, good := p.String(n, g.Path)
			if !good {
				ok = false
				continue
			}
			if !parseDay(s, &q.days) {
				p.Report(n, g.Path, fmt.Sprintf("%q is not a day of the week", s), daysFix)
				ok = false
			}
		}
	} else {
		for i := range q.days {
			q.days[i] = true
		}
	}
	if !ok {
		return nil
	}
	return q
}
