package oncall

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinShift is the shortest shift a rotation may have.
const MinShift = time.Hour

// Length is how long each shift of a rotation lasts: either a number of
// calendar days, counted on the wall clock of the rotation's time zone, or
// a fixed duration in absolute time. Exactly one of the two is set.
//
// A calendar length keeps the handoff at the same local time: a daily
// shift from 09:00 Europe/Berlin ends at 09:00 the next day, 23 hours later
// on the day the clocks go forward and 25 hours later on the day they go
// back. A fixed length does not follow the clocks: a 12h shift is 12 hours
// of real time, so shifts that start at 09:00 and 21:00 in winter start at
// 10:00 and 22:00 after the spring change.
type Length struct {
	// Days is the number of calendar days per shift: 1 for daily, 7 for
	// weekly. A multiple of 7 hands off on the rotation's Weekday.
	Days int
	// Fixed is the shift's absolute duration, at least MinShift.
	Fixed time.Duration
}

// Common lengths.
var (
	Daily  = Length{Days: 1}
	Weekly = Length{Days: 7}
)

// ParseLength reads a shift length: "daily", "weekly", "every N days",
// "every N weeks", or a Go duration such as "12h" (fixed, absolute time).
func ParseLength(s string) (Length, error) {
	t := strings.ToLower(strings.Join(strings.Fields(s), " "))
	switch t {
	case "daily", "every day":
		return Daily, nil
	case "weekly", "every week":
		return Weekly, nil
	}
	if rest, ok := strings.CutPrefix(t, "every "); ok {
		num, unit, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(num)
		if err == nil && n > 0 && n <= 366 {
			switch unit {
			case "days", "day":
				return Length{Days: n}, nil
			case "weeks", "week":
				if n <= 52 {
					return Length{Days: 7 * n}, nil
				}
			}
		}
		return Length{}, fmt.Errorf("%q is not a shift length", s)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return Length{}, fmt.Errorf("%q is not a shift length", s)
	}
	return Length{Fixed: d}, nil
}

// String prints the length the way ParseLength reads it.
func (l Length) String() string {
	switch {
	case l.Fixed != 0:
		return l.Fixed.String()
	case l.Days == 1:
		return "daily"
	case l.Days == 7:
		return "weekly"
	case l.Days%7 == 0:
		return fmt.Sprintf("every %d weeks", l.Days/7)
	}
	return fmt.Sprintf("every %d days", l.Days)
}

// Weekly reports whether shifts are whole weeks, handing off on one
// weekday.
func (l Length) Weekly() bool { return l.Fixed == 0 && l.Days > 0 && l.Days%7 == 0 }

// Validate checks that exactly one of Days and Fixed is set, and that a
// fixed length is at least MinShift.
func (l Length) Validate() error {
	switch {
	case l.Days != 0 && l.Fixed != 0:
		return fmt.Errorf("shift: has both days and a duration; give one")
	case l.Days < 0 || l.Days > 366:
		return fmt.Errorf("shift: %d days is out of range; use 1 to 366 days", l.Days)
	case l.Days == 0 && l.Fixed < MinShift:
		return fmt.Errorf("shift: %s is shorter than 1h; use daily, weekly, every N days, or a duration of at least 1h such as 12h", l.Fixed)
	}
	return nil
}
