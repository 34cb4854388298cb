package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

// Binding connects a setting to one field: set parses text into the field,
// get renders the field back in a form set accepts.
type Binding struct {
	Set     func(string) error
	Get     func() string
	Boolean bool // the flag may be given without a value
}

// offWord is how a setting whose empty value means "disabled" is written in
// the environment, where an empty variable is indistinguishable from an
// unset one.
const offWord = "off"

// redactedValue stands in for a secret that is set.
const redactedValue = "[redacted]"

func StringVar(p *string) Binding {
	return Binding{
		Set: func(s string) error { *p = s; return nil },
		Get: func() string { return *p },
	}
}

// OptStringVar is a string where "off" (any case) stores "" to disable.
func OptStringVar(p *string) Binding {
	return Binding{
		Set: func(s string) error {
			if strings.EqualFold(s, offWord) {
				s = ""
			}
			*p = s
			return nil
		},
		Get: func() string {
			if *p == "" {
				return offWord
			}
			return *p
		},
	}
}

// BaseURLVar is a URL stored without trailing slashes.
func BaseURLVar(p *string) Binding {
	return Binding{
		Set: func(s string) error { *p = strings.TrimRight(s, "/"); return nil },
		Get: func() string { return *p },
	}
}

func IntVar(p *int) Binding {
	return Binding{
		Set: func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil {
				return errors.New("must be a whole number")
			}
			*p = n
			return nil
		},
		Get: func() string { return strconv.Itoa(*p) },
	}
}

func BoolVar(p *bool) Binding {
	return Binding{
		Boolean: true,
		Set: func(s string) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errors.New("must be true or false")
			}
			*p = b
			return nil
		},
		Get: func() string { return strconv.FormatBool(*p) },
	}
}

func DurationVar(p *time.Duration) Binding {
	return Binding{
		Set: func(s string) error {
			d, err := time.ParseDuration(s)
			if err != nil {
				return errors.New("must be a duration with a unit, such as 500ms, 30s, 5m or 24h")
			}
			*p = d
			return nil
		},
		Get: func() string { return FmtDur(*p) },
	}
}

// windowsVar binds a limit written as windows separated by commas, or "off".
func windowsVar(p *Windows) Binding {
	return Binding{
		Set: func(s string) error {
			ws, err := parseWindows(s, ",")
			if err != nil {
				return err
			}
			*p = ws
			return nil
		},
		Get: func() string { return p.String() },
	}
}

// PauseVar binds a duration where "off", 0 or a negative value stores -1
// (switched off), rendered "off".
func PauseVar(p *time.Duration) Binding {
	d := DurationVar(p)
	return Binding{
		Set: func(s string) error {
			if strings.EqualFold(s, offWord) {
				*p = -1
				return nil
			}
			if err := d.Set(s); err != nil {
				return errors.New(`must be a duration with a unit, such as 5s or 1m, or "off"`)
			}
			if *p <= 0 {
				*p = -1
			}
			return nil
		},
		Get: func() string {
			if *p < 0 {
				return offWord
			}
			return FmtDur(*p)
		},
	}
}

func levelVar(p *slog.Level) Binding {
	return Binding{
		Set: func(s string) error {
			lv, err := parseLevel(s)
			if err != nil {
				return err
			}
			*p = lv
			return nil
		},
		Get: func() string { return strings.ToLower(p.String()) },
	}
}

func formatVar(p *string) Binding {
	return Binding{
		Set: func(s string) error {
			f, err := parseFormat(s)
			if err != nil {
				return err
			}
			*p = f
			return nil
		},
		Get: func() string { return *p },
	}
}

// byteUnits maps size suffixes (lower case) to multipliers.
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1000, "mb": 1000 * 1000, "gb": 1000 * 1000 * 1000,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// ParseBytes reads a size such as "1048576", "512KiB", "1MiB" or "2MB".
func ParseBytes(s string) (int64, error) {
	bad := errors.New("must be a size in bytes such as 1048576, 512KiB or 1MiB")
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	mul, ok := byteUnits[strings.ToLower(unit)]
	if num == "" || !ok {
		return 0, bad
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/mul {
		return 0, bad
	}
	return n * mul, nil
}

// FormatBytes renders a size in the largest binary unit that divides it.
func FormatBytes(n int64) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

func BytesVar(p *int64) Binding {
	return Binding{
		Set: func(s string) error {
			n, err := ParseBytes(s)
			if err != nil {
				return err
			}
			*p = n
			return nil
		},
		Get: func() string { return FormatBytes(*p) },
	}
}

// queueEntry is one item of a HERALD_QUEUES list.
type queueEntry struct {
	name     string
	priority int
}

// parseQueueList reads "critical=6,default=3,low=1"; a missing priority
// counts as 1. Names are checked later by validation.
func parseQueueList(s string) ([]queueEntry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []queueEntry
	for item := range strings.SplitSeq(s, ",") {
		name, prio, hasPrio := strings.Cut(strings.TrimSpace(item), "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("has an empty queue name; use NAME=PRIORITY pairs such as %q", defaultQueueWeights())
		}
		e := queueEntry{name: name, priority: 1}
		if hasPrio {
			n, err := strconv.Atoi(strings.TrimSpace(prio))
			if err != nil {
				return nil, fmt.Errorf("gives queue %q the priority %q; priorities must be whole numbers, as in %q", name, prio, defaultQueueWeights())
			}
			e.priority = n
		}
		if slices.ContainsFunc(out, func(o queueEntry) bool { return o.name == name }) {
			return nil, fmt.Errorf("lists queue %q twice; keep one entry per queue", name)
		}
		out = append(out, e)
	}
	return out, nil
}

// queueListVar binds a HERALD_QUEUES list: set parses it and hands the
// entries to keep, which stores the part its field holds; get renders the
// field. The worker and the producer read the same variable into different
// fields.
func queueListVar(keep func([]queueEntry), get func() string) Binding {
	return Binding{
		Set: func(s string) error {
			list, err := parseQueueList(s)
			if err != nil {
				return err
			}
			keep(list)
			return nil
		},
		Get: get,
	}
}

// queueMapVar binds the worker's queue→priority map.
func queueMapVar(p *map[string]int) Binding {
	return queueListVar(func(list []queueEntry) {
		m := make(map[string]int, len(list))
		for _, e := range list {
			m[e.name] = e.priority
		}
		*p = m
	}, func() string { return formatQueueMap(*p) })
}

// defaultQueueWeights renders the worker's default queues as HERALD_QUEUES
// is written, "critical=6,default=3,low=1": the documented default and the
// example errors give.
func defaultQueueWeights() string {
	return formatQueueMap(jobs.DefaultQueueWeights())
}

// formatQueueMap renders queues by descending priority, then by name.
func formatQueueMap(m map[string]int) string {
	names := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Itoa(m[n])
	}
	return strings.Join(parts, ",")
}

// queueNamesVar binds the producer's queue list; priorities are accepted
// (the variable is shared with the worker) but not kept.
func queueNamesVar(p *[]string) Binding {
	return queueListVar(func(list []queueEntry) {
		names := make([]string, len(list))
		for i, e := range list {
			names[i] = e.name
		}
		*p = names
	}, func() string { return strings.Join(*p, ",") })
}

// queueLimitsVar binds "default=20/s+100/m,low=5/s": NAME=LIMIT pairs
// separated by commas, a queue's windows joined with "+".
func queueLimitsVar(p *map[string]Windows) Binding {
	const pairs = `must be NAME=LIMIT pairs such as "default=20/s,low=5/s"`
	return Binding{
		Set: func(s string) error {
			if strings.TrimSpace(s) == "" {
				*p = nil
				return nil
			}
			m := map[string]Windows{}
			for item := range strings.SplitSeq(s, ",") {
				name, lim, ok := strings.Cut(strings.TrimSpace(item), "=")
				name = strings.TrimSpace(name)
				if !ok || name == "" {
					if _, err := parseWindow(strings.TrimSpace(item), "+"); err == nil && len(m) > 0 {
						return fmt.Errorf(`has %q without a queue name; join one queue's windows with "+", as in "default=20/s+100/m,low=5/s"`,
							strings.TrimSpace(item))
					}
					return errors.New(pairs + `; join one queue's windows with "+" ("default=20/s+100/m")`)
				}
				if _, dup := m[name]; dup {
					return fmt.Errorf("lists queue %q twice; keep one entry per queue", name)
				}
				if strings.TrimSpace(lim) == "" {
					return fmt.Errorf(`gives queue %q no limit; write one such as "%s=20/s", or "%s=off"`, name, name, name)
				}
				ws, err := parseWindows(lim, "+")
				if err != nil {
					return fmt.Errorf("has limit %q for queue %q, which %v", strings.TrimSpace(lim), name, err)
				}
				m[name] = ws
			}
			*p = m
			return nil
		},
		Get: func() string { return formatQueueLimits(*p) },
	}
}

// formatQueueLimits renders per-queue limits by name, windows joined with "+".
func formatQueueLimits(m map[string]Windows) string {
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		w := m[n]
		if w == nil {
			w = Unlimited
		}
		parts[i] = n + "=" + w.join("+")
	}
	return strings.Join(parts, ",")
}

// validQueueName reports whether name matches [a-z0-9_-]+.
func validQueueName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FmtDur renders a duration like time.Duration.String but without trailing
// zero units, so 10m0s reads 10m and 168h0m0s reads 168h.
func FmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
