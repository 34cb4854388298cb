package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// Window is one limit in Telegram's own terms: at most N sends in any span of
// Per. It is a sliding window over send times, not a token bucket: the
// (N+1)th send waits until Per (plus Config.Guard) has passed since the send
// N places before it. Written "30/s", "20/m", "100/h" or "20/6s".
type Window struct {
	N   int           // sends allowed in any span of Per; 1 to MaxWindowSends
	Per time.Duration // the span; at least MinWindowSpan
}

// Limit is a set of windows that must all hold, such as a group's "1/s,20/m"
// (1 send in any second and 20 in any minute). A nil Limit in Config selects
// the field's default; an empty, non-nil Limit (Unlimited, written "off")
// switches the limit off.
type Limit []Window

// Unlimited is the Limit that never holds a message back ("off").
var Unlimited = Limit{}

// Per builds a Limit of one window: n sends per period.
func Per(n int, period time.Duration) Limit { return Limit{{N: n, Per: period}} }

// And adds the windows of o to l.
func (l Limit) And(o Limit) Limit { return append(append(Limit{}, l...), o...) }

// Bounds of a window.
const (
	// MinWindowSpan is the shortest span a window may have; the limiter
	// works in microseconds and dispatch jitter is far above this.
	MinWindowSpan = time.Millisecond
	// MaxWindowSends is the largest N of a window: every decision reads the
	// last N sends of the log it checks.
	MaxWindowSends = 10000
)

// limitForm is the hint shown whenever a limit cannot be parsed; sep is how
// its windows are joined.
func limitForm(sep string) string {
	if sep == "+" {
		return `must be windows "N/span" joined with "+", where span is s, m, h or a Go duration ` +
			`(e.g. "20/s", "20/s+100/m", "20/6s"), or "off" to disable`
	}
	return `must be one or more windows "N/span" separated by commas, where span is s, m, h or a Go duration ` +
		`(e.g. "30/s", "1/s,20/m", "20/6s", "30/100ms"), or "off" to disable`
}

// ParseLimit reads a limit: one or more windows separated by commas, such
// as "30/s", "1/s,20/m", "20/6s" or "1/1.5s". A span is s, m, h or a Go
// duration. N is a whole number of sends; a rate below one send per span
// such as "0.5/s" is read as one send per longer span ("1/2s"). "off" (and
// "" or "0") gives Unlimited.
func ParseLimit(s string) (Limit, error) {
	l, err := parseLimit(s, ",")
	if err != nil {
		return nil, fmt.Errorf("ratelimit: limit %q %w", s, err)
	}
	return l, nil
}

// parseLimit does the work of ParseLimit with windows joined by sep
// ("," or "+"; a comma-separated setting accepts "+" too). Its errors carry
// no input so callers can decide how to show it.
func parseLimit(s, sep string) (Limit, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "", "0", config.OffWord:
		return Unlimited, nil
	}
	parts := strings.Split(strings.ReplaceAll(t, "+", sep), sep)
	l := make(Limit, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf(`has an empty window; separate windows with single %q, as in %q`, sep, "1/s"+sep+"20/m")
		}
		if strings.EqualFold(p, config.OffWord) {
			return nil, errors.New(`mixes "off" with windows; write either "off" alone or only the windows`)
		}
		w, err := parseWindow(p, sep)
		if err != nil {
			if len(parts) > 1 {
				return nil, fmt.Errorf("has the window %q, which %w", p, err)
			}
			return nil, err
		}
		l = append(l, w)
	}
	return l, nil
}

// parseWindow reads one "N/span".
func parseWindow(s, sep string) (Window, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return Window{}, errors.New(limitForm(sep))
	}
	num, unit = strings.TrimSpace(num), strings.TrimSpace(unit)
	if !isDecimal(num) {
		return Window{}, errors.New(limitForm(sep))
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(n, 0) {
		return Window{}, errors.New(limitForm(sep))
	}
	per, err := parseSpan(unit, sep)
	if err != nil {
		return Window{}, err
	}
	switch {
	case n == 0:
		return Window{}, errors.New(`allows 0 sends, which would block every message; use "off" to disable the limit instead`)
	case n < 1:
		// Less than one send per span: one send per span/n.
		p := float64(per) / n
		if p >= math.MaxInt64 {
			return Window{}, errors.New(`is too slow to represent; raise it or use "off"`)
		}
		return Window{N: 1, Per: time.Duration(math.Round(p))}.checked()
	case n != math.Trunc(n):
		return Window{}, fmt.Errorf("has the fractional send count %s; write whole sends per span, e.g. %s",
			num, wholeHint(n, per))
	case n > MaxWindowSends:
		return Window{}, tooManySends(num)
	}
	return Window{N: int(n), Per: per}.checked()
}

// tooManySends is the error for a window above MaxWindowSends.
func tooManySends(n string) error {
	return fmt.Errorf(`allows %s sends per span, more than %d; write the same rate over a shorter span `+
		`(e.g. "1000/36s" rather than "100000/h")`, n, MaxWindowSends)
}

// wholeHint rewrites n sends per span as whole sends over a longer span,
// "5/2s" for 2.5 per second, or gives a generic example.
func wholeHint(n float64, per time.Duration) string {
	for k := 2; k <= 100; k++ {
		m := n * float64(k)
		if math.Abs(m-math.Round(m)) < 1e-9 && m <= MaxWindowSends && float64(per)*float64(k) < math.MaxInt64 {
			return strconv.Quote(Window{N: int(math.Round(m)), Per: per * time.Duration(k)}.String())
		}
	}
	return `"5/2s" rather than "2.5/s"`
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

// parseSpan reads the part after the slash: a unit letter or a duration.
func parseSpan(unit, sep string) (time.Duration, error) {
	switch strings.ToLower(unit) {
	case "s", "sec", "second":
		return time.Second, nil
	case "m", "min", "minute":
		return time.Minute, nil
	case "h", "hour":
		return time.Hour, nil
	}
	if unit == "" || unit[0] < '0' || unit[0] > '9' {
		return 0, errors.New(limitForm(sep))
	}
	d, err := time.ParseDuration(unit)
	if err != nil || d <= 0 {
		return 0, errors.New(limitForm(sep))
	}
	return d, nil
}

// checked returns w, or an error when it is out of bounds.
func (w Window) checked() (Window, error) {
	if err := w.check(); err != nil {
		return Window{}, err
	}
	return w, nil
}

// check reports whether w is usable.
func (w Window) check() error {
	switch {
	case w.N < 1:
		return fmt.Errorf("allows %d sends; a window allows at least 1 (use \"off\" to disable the limit)", w.N)
	case w.N > MaxWindowSends:
		return tooManySends(strconv.Itoa(w.N))
	case w.Per < MinWindowSpan:
		return fmt.Errorf(`has a span of %s, below the %s minimum; write the same rate over a longer span `+
			`(e.g. "10/1ms" rather than "1/100us")`, config.FmtDur(w.Per), config.FmtDur(MinWindowSpan))
	}
	return nil
}

// String renders the window as ParseLimit reads it: "30/s", "20/m",
// "100/h", or the span as a Go duration ("20/6s", "1/1.5s").
func (w Window) String() string {
	var unit string
	switch w.Per {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	default:
		unit = config.FmtDur(w.Per)
	}
	return strconv.Itoa(w.N) + "/" + unit
}

// String renders the limit as ParseLimit reads it: windows separated by
// commas ("1/s,20/m"), "off" for Unlimited, or "" for a nil (unset) limit.
func (l Limit) String() string { return l.join(",") }

// join renders the windows joined by sep.
func (l Limit) join(sep string) string {
	if l == nil {
		return ""
	}
	if len(l) == 0 {
		return config.OffWord
	}
	parts := make([]string, len(l))
	for i, w := range l {
		parts[i] = w.String()
	}
	return strings.Join(parts, sep)
}

// Off reports whether the limit is switched off (empty but not nil).
func (l Limit) Off() bool { return l != nil && len(l) == 0 }

// Shortest is the shortest span of the windows, or 0 when there are none.
func (l Limit) Shortest() time.Duration {
	var m time.Duration
	for i, w := range l {
		if i == 0 || w.Per < m {
			m = w.Per
		}
	}
	return m
}

// check reports the first window that is out of bounds.
func (l Limit) check() error {
	for _, w := range l {
		if err := w.check(); err != nil {
			if len(l) > 1 {
				return fmt.Errorf("has the window %s, which %w", w, err)
			}
			return err
		}
	}
	return nil
}

// MarshalText renders the limit with String, so a Limit works with
// encoders and flag.TextVar.
func (l Limit) MarshalText() ([]byte, error) {
	return []byte(l.String()), nil
}

// UnmarshalText parses text with ParseLimit.
func (l *Limit) UnmarshalText(text []byte) error {
	v, err := ParseLimit(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
