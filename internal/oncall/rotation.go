package oncall

import (
	"errors"
	"fmt"
	"time"
)

// Rotation is one layer of a schedule: its users take turns, in order,
// one shift each, forever from the first handoff on (or until End).
//
// The first shift begins at the first handoff at or after Start and goes
// to Users[0]; shift k goes to Users[k mod len(Users)]. Handoffs are at
// Handoff, wall-clock time in Location, on every day (daily, every N days)
// or on Weekday (weekly, every N weeks); a Fixed length hands off first at
// Handoff and then every Fixed of absolute time. See WallTime for the days
// on which the clock skips or repeats the handoff time.
type Rotation struct {
	// Name names the layer in messages and errors; it may be empty.
	Name string
	// Users take turns in this order; an ID appears once.
	Users []User
	// Length is how long each shift lasts.
	Length Length
	// Handoff is the wall-clock time shifts change at.
	Handoff Clock
	// Weekday is the day weekly shifts change on; it is ignored by other
	// lengths.
	Weekday time.Weekday
	// Location is the time zone of Handoff, Weekday and calendar days.
	Location *time.Location
	// Start anchors the rotation: the first shift begins at the first
	// handoff at or after it.
	Start time.Time
	// End, when not zero, ends the layer at the first handoff at or after
	// it: nobody is on call in this layer from then on.
	End time.Time
}

// Validate checks the rotation: users (at least one, each valid, no ID
// twice), the length, the handoff time, the time zone and the dates. The
// error names the field and the fix.
func (r Rotation) Validate() error {
	if len(r.Users) == 0 {
		return errors.New("users: the layer has no users; list at least one user with an id and a name")
	}
	seen := make(map[int64]int, len(r.Users))
	for i, u := range r.Users {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("users[%d].%w", i, err)
		}
		if j, dup := seen[u.ID]; dup {
			return fmt.Errorf("users[%d].id: user %d is listed twice (also users[%d]); list each person once", i, u.ID, j)
		}
		seen[u.ID] = i
	}
	if err := r.Length.Validate(); err != nil {
		return err
	}
	switch {
	case !r.Handoff.valid():
		return fmt.Errorf("handoff: %s is not a time of day; write HH:MM on a 24-hour clock, such as \"09:00\"", r.Handoff)
	case r.Location == nil:
		return errors.New("time_zone: is missing; name an IANA time zone such as Europe/Berlin")
	case r.Weekday < time.Sunday || r.Weekday > time.Saturday:
		return fmt.Errorf("handoff_day: %d is not a weekday", r.Weekday)
	case r.Start.IsZero():
		return errors.New("start: is missing; give the date the rotation starts, such as 2026-01-05")
	case !r.End.IsZero() && !r.End.After(r.Start):
		return fmt.Errorf("end: %s is not after start %s; end the layer after it starts", r.End.Format(time.DateTime), r.Start.Format(time.DateTime))
	}
	return nil
}

// ShiftAt returns the user on call in this layer at t and their shift.
// When nobody is (before the first handoff, or from End on), ok is false
// and the shift is the span without anyone, whose unbounded ends are zero.
func (r Rotation) ShiftAt(t time.Time) (User, Shift, bool) {
	u, lo, hi, ok := r.at(t)
	return u, exported(lo, hi), ok
}

// at is ShiftAt with far-away sentinels for unbounded ends.
func (r Rotation) at(t time.Time) (u User, lo, hi time.Time, ok bool) {
	if len(r.Users) == 0 || r.Location == nil {
		return User{}, farPast, farFuture, false
	}
	first := r.first()
	end := farFuture
	if !r.End.IsZero() {
		end = r.boundaryFrom(first, r.End)
		if !first.Before(end) {
			return User{}, farPast, farFuture, false
		}
	}
	switch {
	case t.Before(first):
		return User{}, farPast, first, false
	case !t.Before(end):
		return User{}, end, farFuture, false
	}
	k := r.index(first, t)
	lo, hi = r.shiftStart(first, k), r.shiftStart(first, k+1)
	if hi.After(end) {
		hi = end
	}
	return r.Users[k%int64(len(r.Users))], lo, hi, true
}

// first is the first handoff at or after Start: on Start's day or a later
// one (the right weekday for weekly lengths), at the handoff time.
func (r Rotation) first() time.Time {
	day := dayNumber(r.Start.In(r.Location))
	for i := int64(0); ; i++ {
		if r.Length.Weekly() && weekday(day+i) != r.Weekday {
			continue
		}
		if h := r.handoffOn(day + i); !h.Before(r.Start) {
			return h
		}
	}
}

// index is the number of the shift holding t, which is at or after first.
func (r Rotation) index(first, t time.Time) int64 {
	if r.Length.Fixed != 0 {
		return int64(t.Sub(first) / r.Length.Fixed)
	}
	n := int64(r.Length.Days)
	k := floorDiv(dayNumber(t.In(r.Location))-dayNumber(first.In(r.Location)), n)
	for k > 0 && t.Before(r.shiftStart(first, k)) {
		k--
	}
	for !t.Before(r.shiftStart(first, k+1)) {
		k++
	}
	return k
}

// shiftStart is when shift k begins.
func (r Rotation) shiftStart(first time.Time, k int64) time.Time {
	if r.Length.Fixed != 0 {
		return first.Add(time.Duration(k) * r.Length.Fixed)
	}
	return r.handoffOn(dayNumber(first.In(r.Location)) + k*int64(r.Length.Days))
}

// boundaryFrom is the first shift boundary at or after t.
func (r Rotation) boundaryFrom(first, t time.Time) time.Time {
	if !t.After(first) {
		return first
	}
	k := r.index(first, t)
	if s := r.shiftStart(first, k); s.Equal(t) {
		return s
	}
	return r.shiftStart(first, k+1)
}

// handoffOn is the handoff time on the given day.
func (r Rotation) handoffOn(day int64) time.Time {
	y, m, d := time.Unix(day*secondsPerDay, 0).UTC().Date()
	return WallTime(y, m, d, r.Handoff.Hour, r.Handoff.Minute, r.Location)
}

const secondsPerDay = 24 * 60 * 60

// dayNumber counts the calendar days from 1970-01-01 to t's date, as t's
// location shows it.
func dayNumber(t time.Time) int64 {
	y, m, d := t.Date()
	return floorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), secondsPerDay)
}

// weekday is the weekday of a day number.
func weekday(day int64) time.Weekday {
	return time.Unix(day*secondsPerDay, 0).UTC().Weekday()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
