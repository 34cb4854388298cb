package oncall

import (
	"fmt"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/yamlstrict"
)

// zone reads a time zone name. After a problem it returns UTC, so that
// the times read in the zone are not reported too; the schedule is
// discarded anyway.
func (p *scheduleParser) zone(f yamlstrict.Field) *time.Location {
	s, ok := p.w.String(f.Value, f.Path)
	if !ok {
		return time.UTC
	}
	loc, err := LoadZone(s)
	if err != nil {
		p.w.Report(f.Value, f.Path, err.Error(), "name an IANA time zone such as Europe/Berlin or America/New_York, or UTC")
		return time.UTC
	}
	return loc
}

// LoadZone loads an IANA time zone by name. "Local" and the empty name
// are refused: a schedule must not depend on the machine it runs on.
func LoadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch name {
	case "", "Local":
		return nil, fmt.Errorf("%q is not a time zone name", name)
	case "UTC":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

// clock reads a handoff time.
func (p *scheduleParser) clock(f yamlstrict.Field) Clock {
	s, ok := p.w.String(f.Value, f.Path)
	if !ok {
		return Clock{}
	}
	c, err := ParseClock(s)
	if err != nil {
		p.w.Report(f.Value, f.Path, err.Error(), `write HH:MM on a 24-hour clock, in quotes, such as "09:00"`)
	}
	return c
}

// length reads a shift length, at least MinShift.
func (p *scheduleParser) length(f yamlstrict.Field) Length {
	s, ok := p.w.String(f.Value, f.Path)
	if !ok {
		return Length{}
	}
	l, err := ParseLength(s)
	if err != nil {
		p.w.Report(f.Value, f.Path, err.Error(), "use daily, weekly, every N days, every N weeks, or a duration such as 12h")
		return Length{}
	}
	if l.Fixed != 0 && l.Fixed < MinShift {
		p.w.Report(f.Value, f.Path, fmt.Sprintf("%s is shorter than 1h", s), "use a shift of at least 1h, or daily or weekly")
		return Length{}
	}
	return l
}

// weekday reads a handoff day.
func (p *scheduleParser) weekday(f yamlstrict.Field) time.Weekday {
	s, ok := p.w.String(f.Value, f.Path)
	if !ok {
		return time.Monday
	}
	s = strings.ToLower(strings.TrimSpace(s))
	for d := time.Sunday; d <= time.Saturday; d++ {
		if name := strings.ToLower(d.String()); s == name || s == name[:3] {
			return d
		}
	}
	p.w.Report(f.Value, f.Path, fmt.Sprintf("%q is not a day of the week", s), "use monday to sunday, or mon to sun")
	return time.Monday
}

// localLayouts are the forms of a date or time without an offset, read in
// the layer's or schedule's time zone.
var localLayouts = []string{time.DateOnly, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", time.DateTime}

// when reads a date or time. A time with an offset (RFC 3339) is that
// instant; one without is wall-clock time in loc, read by WallTime, and a
// date alone is its midnight.
func (p *scheduleParser) when(f yamlstrict.Field, loc *time.Location) time.Time {
	s, ok := p.w.String(f.Value, f.Path)
	if !ok {
		return time.Time{}
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	for _, layout := range localLayouts {
		c, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if loc == nil {
			p.w.Report(f.Value, f.Path, fmt.Sprintf("%q has no offset and there is no time zone to read it in", s), "set time_zone: on the schedule, or write the offset, as in 2026-03-28T09:00:00+01:00")
			return time.Time{}
		}
		return WallTime(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), loc)
	}
	p.w.Report(f.Value, f.Path, fmt.Sprintf("%q is not a date or time", s), `write a date such as 2026-01-05, a local time such as "2026-03-28T09:00", or one with an offset such as 2026-03-28T09:00:00+01:00`)
	return time.Time{}
}
