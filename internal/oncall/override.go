package oncall

import (
	"errors"
	"fmt"
	"time"
)

// Override puts User on call from Start to End, in place of whoever the
// layers say. Of two overrides that overlap, the one made later wins where
// they overlap; a schedule keeps its overrides in the order they were
// made.
type Override struct {
	User  User
	Start time.Time
	End   time.Time
}

// Validate checks the user and that End comes after Start.
func (o Override) Validate() error {
	if err := o.User.Validate(); err != nil {
		return fmt.Errorf("user.%w", err)
	}
	switch {
	case o.Start.IsZero():
		return errors.New("start: is missing; give when the override begins, such as 2026-03-28T09:00")
	case o.End.IsZero():
		return errors.New("end: is missing; give when the override ends, such as 2026-03-30T09:00")
	case !o.End.After(o.Start):
		return fmt.Errorf("end: %s is not after start %s; give an end later than the start",
			o.End.Format(time.RFC3339), o.Start.Format(time.RFC3339))
	}
	return nil
}

// contains reports whether o is in force at t.
func (o Override) contains(t time.Time) bool { return !t.Before(o.Start) && t.Before(o.End) }

// outside is the span around t, which o does not contain, that o leaves
// alone.
func (o Override) outside(t time.Time) (lo, hi time.Time) {
	if t.Before(o.Start) {
		return farPast, o.Start
	}
	return o.End, farFuture
}
