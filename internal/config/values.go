package config

import (
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Binding connects a setting to one field: set parses text into the field,
// get renders the field back in a form set accepts.
type Binding struct {
	Set     func(string) error
	Get     func() string
	Boolean bool // the flag may be given without a value
}

// OffWord is how a setting whose empty value means "disabled" is written in
// the environment, where an empty variable is indistinguishable from an
// unset one.
const OffWord = "off"

// RedactedValue stands in for a secret that is set.
const RedactedValue = "[redacted]"

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
			if strings.EqualFold(s, OffWord) {
				s = ""
			}
			*p = s
			return nil
		},
		Get: func() string {
			if *p == "" {
				return OffWord
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

// PauseVar binds a duration where "off", 0 or a negative value stores -1
// (switched off), rendered "off".
func PauseVar(p *time.Duration) Binding {
	d := DurationVar(p)
	return Binding{
		Set: func(s string) error {
			if strings.EqualFold(s, OffWord) {
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
				return OffWord
			}
			return FmtDur(*p)
		},
	}
}

func LevelVar(p *slog.Level) Binding {
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

func FormatVar(p *string) Binding {
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
