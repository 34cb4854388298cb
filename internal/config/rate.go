package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is a number of events allowed per period, written "30/s", "20/m",
// "0.5/s" or "100/h". The zero value means the limit is disabled.
type Rate struct {
	Events float64       // events allowed in one period; > 0 when enabled
	Per    time.Duration // length of the period; > 0 when enabled
}

// rateForm is the hint shown whenever a rate cannot be parsed.
const rateForm = `must look like "N/s", "N/m" or "N/h" (e.g. "30/s", "0.5/s", "20/m"), or "off" to disable`

// ParseRate reads a rate such as "30/s", "20/m", "0.5/s" or "100/h". The
// period may also be a Go duration ("10/30s"). "", "0" and "off" give the zero
// Rate, which disables the limit.
func ParseRate(s string) (Rate, error) {
	r, err := parseRate(s)
	if err != nil {
		return Rate{}, fmt.Errorf("config: rate %q %w", s, err)
	}
	return r, nil
}

// parseRate does the work of ParseRate; its errors carry no input so callers
// can decide how to show it.
func parseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "0", "off":
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(t, "/")
	if !ok {
		return Rate{}, errors.New(rateForm)
	}
	num, unit = strings.TrimSpace(num), strings.TrimSpace(unit)
	if !isDecimal(num) {
		return Rate{}, errors.New(rateForm)
	}
	events, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(events, 0) {
		return Rate{}, errors.New(rateForm)
	}
	if events == 0 {
		return Rate{}, errors.New(`would block every message; use "off" to disable the limit instead`)
	}
	per, err := parsePeriod(unit)
	if err != nil {
		return Rate{}, err
	}
	r := Rate{Events: events, Per: per}
	if err := r.check(); err != nil {
		return Rate{}, err
	}
	return r, nil
}

// isDecimal reports whether s is a plain non-negative decimal number such as
// "30", "0.5" or ".5": digits with at most one dot.
func isDecimal(s string) bool {
	digits, dots := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// parsePeriod reads the part after the slash: a unit letter or a duration.
func parsePeriod(unit string) (time.Duration, error) {
	switch strings.ToLower(unit) {
	case "s", "sec", "second":
		return time.Second, nil
	case "m", "min", "minute":
		return time.Minute, nil
	case "h", "hour":
		return time.Hour, nil
	}
	if unit == "" || unit[0] < '0' || unit[0] > '9' {
		return 0, errors.New(rateForm)
	}
	d, err := time.ParseDuration(unit)
	if err != nil || d <= 0 {
		return 0, errors.New(rateForm)
	}
	return d, nil
}

// check reports whether an enabled rate is usable: positive, finite and with
// an interval between one nanosecond and the largest time.Duration.
func (r Rate) check() error {
	if r.IsZero() {
		return nil
	}
	if !(r.Events > 0) || math.IsInf(r.Events, 0) || r.Per <= 0 {
		return errors.New(rateForm)
	}
	iv := float64(r.Per) / r.Events
	if iv < 1 {
		return errors.New("is faster than one event per nanosecond; lower it or use \"off\"")
	}
	if iv >= math.MaxInt64 {
		return errors.New("is too slow to represent; raise it or use \"off\"")
	}
	return nil
}

// Interval is the spacing between events at this rate (Per / Events), or 0
// when the rate is disabled.
func (r Rate) Interval() time.Duration {
	if r.IsZero() || !(r.Events > 0) || r.Per <= 0 {
		return 0
	}
	iv := float64(r.Per) / r.Events
	if iv >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(iv)
}

// String renders the rate in the form ParseRate reads, e.g. "30/s", or "off"
// for the zero Rate.
func (r Rate) String() string {
	if r.IsZero() {
		return "off"
	}
	var unit string
	switch r.Per {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	default:
		unit = fmtDur(r.Per)
	}
	return strconv.FormatFloat(r.Events, 'f', -1, 64) + "/" + unit
}

// IsZero reports whether the rate is the zero value, i.e. disabled.
func (r Rate) IsZero() bool {
	return r == Rate{}
}

// MarshalText renders the rate with String, so a Rate works with encoders
// and flag.TextVar.
func (r Rate) MarshalText() ([]byte, error) {
	return []byte(r.String()), nil
}

// UnmarshalText parses text with ParseRate.
func (r *Rate) UnmarshalText(text []byte) error {
	v, err := ParseRate(string(text))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Limit is a rate plus the number of events that may be spent at once (a
// token bucket). Burst must be at least 1 whenever Rate is enabled.
type Limit struct {
	Rate  Rate
	Burst int
}

// String renders the limit as "30/s burst 10", or "off".
func (l Limit) String() string {
	if l.Rate.IsZero() {
		return "off"
	}
	return l.Rate.String() + " burst " + strconv.Itoa(l.Burst)
}
