package heartbeat

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	// Time zone names must resolve on every replica, including one built
	// into an image without /usr/share/zoneinfo; the embedded database is
	// only consulted when the system has none.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Bounds on schedules.
const (
	// maxScheduleLen is the longest cron expression a heartbeat may declare.
	maxScheduleLen = 128
	// defaultTimeZone is the time zone of a schedule that names none.
	defaultTimeZone = "UTC"
	// scheduleCandidates is how many scheduled times the store passes to
	// the ping script, so that it can pick the first one after its own
	// clock and the one after it (for the default grace).
	scheduleCandidates = 6
	// maxRepeatSkips bounds how many scheduled times next skips in the
	// repeated hour of a clock change (a per-minute schedule has 60).
	maxRepeatSkips = 1000
)

// cronParser reads the five standard fields (minute, hour, day of month,
// month, day of week) and the descriptors (@yearly, @monthly, @weekly,
// @daily, @midnight, @hourly).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule is a parsed cron expression in its time zone.
type schedule struct {
	expr string
	tz   string
	loc  *time.Location
	spec cron.Schedule
}

// parseSchedule checks a declared schedule and time zone ("" means UTC)
// and returns the problems as messages for the fields schedule and
// time_zone. now is used to make sure the schedule fires at all.
func parseSchedule(expr, tz string, now time.Time) (*schedule, map[string]string) {
	problems := map[string]string{}
	expr = strings.Join(strings.Fields(expr), " ")
	tz = strings.TrimSpace(tz)
	if tz == "" {
		tz = defaultTimeZone
	}
	loc, err := loadLocation(tz)
	if err != nil {
		problems["time_zone"] = fmt.Sprintf("%q is not a known IANA time zone; use a name such as UTC or Europe/Berlin", tz)
	}
	var spec cron.Schedule
	switch {
	case expr == "":
		problems["schedule"] = "is empty; use a cron expression such as \"0 3 * * *\" or a descriptor such as @daily"
	case len(expr) > maxScheduleLen:
		problems["schedule"] = fmt.Sprintf("is %d characters long; the limit is %d", len(expr), maxScheduleLen)
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		problems["schedule"] = "must not carry a time zone prefix; give the zone in time_zone"
	case strings.HasPrefix(expr, "@every"):
		problems["schedule"] = "@every is an interval, not a schedule; declare interval instead"
	default:
		if spec, err = cronParser.Parse(expr); err != nil {
			problems["schedule"] = fmt.Sprintf("is not a cron expression (%v); use five fields (minute hour day-of-month month day-of-week) such as \"0 3 * * *\", or @hourly, @daily, @weekly, @monthly, @yearly", err)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	s := &schedule{expr: expr, tz: tz, loc: loc, spec: spec}
	if s.next(now).IsZero() {
		problems["schedule"] = fmt.Sprintf("%q never fires (no time matches it within five years)", expr)
		return nil, problems
	}
	return s, nil
}

// locations caches loaded time zones: time.LoadLocation reads the zone
// database on every call.
var locations sync.Map // name → *time.Location

func loadLocation(name string) (*time.Location, error) {
	if v, ok := locations.Load(name); ok {
		return v.(*time.Location), nil
	}
	// "Local" is the server's own zone, which differs between replicas.
	if name == "Local" {
		return nil, errors.New("the server's local zone is not allowed")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, loc)
	return loc, nil
}

// next returns the first scheduled time strictly after t, in UTC, or the
// zero time when there is none within five years.
//
// Clock changes: a wall-clock time that a spring-forward skips does not
// occur (the schedule's next occurrence counts instead), and a wall-clock
// time that a fall-back repeats counts once, at its first occurrence. Both
// only ever make a deadline later, so a job run by a cron daemon (which
// runs a fixed-time job once on the night the clocks go back) is never
// reported overdue because of the change.
func (s *schedule) next(t time.Time) time.Time {
	c := t.In(s.loc)
	for range maxRepeatSkips {
		c = s.spec.Next(c)
		if c.IsZero() {
			return time.Time{}
		}
		if !repeatedWallClock(c) {
			return c.UTC()
		}
	}
	return time.Time{}
}

// repeatedWallClock reports whether the wall-clock reading of t (in its
// location) already occurred earlier, because the clocks went back
// between then and t.
func repeatedWallClock(t time.Time) bool {
	_, off := t.Zone()
	// Clock changes are hours apart at the very least, so the offset six
	// hours earlier is the one before any change affecting t.
	_, before := t.Add(-6 * time.Hour).Zone()
	shift := time.Duration(before-off) * time.Second
	if shift <= 0 {
		return false
	}
	// The same reading occurred shift earlier if the old offset was still
	// in force then.
	_, then := t.Add(-shift).Zone()
	return then == before
}

// candidates returns the first n scheduled times strictly after from.
func (s *schedule) candidates(from time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	t := from
	for len(out) < n {
		t = s.next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// key identifies the schedule and time zone as stored, so the ping script
// can tell that candidates were computed for the schedule in force.
func scheduleKey(expr, tz string) string { return expr + "\n" + tz }
