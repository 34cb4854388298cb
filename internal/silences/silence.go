package silences

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// Limits on a silence's fields.
const (
	MaxMatchers       = 32
	MaxMatcherNameLen = 256
	MaxMatcherValue   = alerts.MaxLabelLen
	MaxCommentLen     = 1024
	MaxCreatedByLen   = 256
	MaxIDLen          = 64
)

// Matcher names with a meaning of their own: the alert's source and
// severity. Any other name is a label's; "labels." followed by a name
// always means the label, so that a label called source or severity can be
// matched too.
const (
	FieldSource   = "source"
	FieldSeverity = "severity"
	labelPrefix   = "labels."
)

// State is where a silence is in its life.
type State string

// The states of a silence.
const (
	// StatePending: it starts in the future.
	StatePending State = "pending"
	// StateActive: it is in force; matching alerts are not sent.
	StateActive State = "active"
	// StateExpired: its end has passed; it is kept for the retention.
	StateExpired State = "expired"
)

// Matcher is one condition of a silence, as in Alertmanager: the alert's
// value named Name equals Value or, with IsRegex, matches the regular
// expression Value as a whole (Go RE2 syntax). A missing label counts as
// the empty value.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"is_regex"`

	re *regexp.Regexp // compiled Value when IsRegex
}

// Silence mutes the alerts that all of its matchers match, from StartsAt
// until EndsAt.
type Silence struct {
	ID        string    `json:"id"`
	Matchers  []Matcher `json:"matchers"`
	StartsAt  time.Time `json:"starts_at"`
	EndsAt    time.Time `json:"ends_at"`
	Comment   string    `json:"comment"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

// State returns the silence's state at now.
func (s *Silence) State(now time.Time) State {
	switch {
	case !now.Before(s.EndsAt):
		return StateExpired
	case now.Before(s.StartsAt):
		return StatePending
	}
	return StateActive
}

// ActiveAt reports whether the silence is in force at now.
func (s *Silence) ActiveAt(now time.Time) bool { return s.State(now) == StateActive }

// Matches reports whether every matcher of the silence holds for a. The
// silence must have been compiled (as every silence the Store returns is).
func (s *Silence) Matches(a *alerts.Alert) bool {
	for i := range s.Matchers {
		if !s.Matchers[i].matches(a) {
			return false
		}
	}
	return len(s.Matchers) > 0
}

// value is the alert's value that the matcher tests.
func (m *Matcher) value(a *alerts.Alert) string {
	switch m.Name {
	case FieldSource:
		return a.Source
	case FieldSeverity:
		return string(a.Severity)
	}
	return a.Labels[strings.TrimPrefix(m.Name, labelPrefix)]
}

func (m *Matcher) matches(a *alerts.Alert) bool {
	v := m.value(a)
	if m.IsRegex {
		return m.re != nil && m.re.MatchString(v)
	}
	return v == m.Value
}

// matchesEmpty reports whether the matcher holds for an empty value.
func (m *Matcher) matchesEmpty() bool {
	if m.IsRegex {
		return m.re != nil && m.re.MatchString("")
	}
	return m.Value == ""
}

// compile prepares the regular expressions of s; a record read back from
// Redis was valid when it was stored, so an error means a bug or a
// tampered record.
func (s *Silence) compile() error {
	for i := range s.Matchers {
		m := &s.Matchers[i]
		if !m.IsRegex {
			continue
		}
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return fmt.Errorf("silence %s: matchers[%d]: %w", s.ID, i, err)
		}
		m.re = re
	}
	return nil
}

// Input is what a caller asks for when creating a silence.
type Input struct {
	// Matchers must all hold for an alert to be silenced; at least one.
	Matchers []Matcher
	// StartsAt is when the silence begins; zero, or a time in the past,
	// means now.
	StartsAt time.Time
	// EndsAt is when it ends; or leave it zero and set Duration.
	EndsAt time.Time
	// Duration is EndsAt - StartsAt, when EndsAt is zero.
	Duration time.Duration
	// Comment says why; optional.
	Comment string
	// CreatedBy says who; required.
	CreatedBy string
}

// build checks in and returns the silence it describes (without id), or a
// *jobs.ValidationError naming every bad field with its JSON name.
func (in Input) build(now time.Time, maxDuration time.Duration) (Silence, error) {
	var fields []jobs.FieldError
	bad := func(field, format string, args ...any) {
		fields = append(fields, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	now = now.UTC().Truncate(time.Millisecond)
	s := Silence{Comment: strings.TrimSpace(in.Comment), CreatedBy: strings.TrimSpace(in.CreatedBy), CreatedAt: now}
	switch {
	case len(in.Matchers) == 0:
		bad("matchers", "must hold at least one matcher, such as {\"name\": \"severity\", \"value\": \"warning\"}")
	case len(in.Matchers) > MaxMatchers:
		bad("matchers", "holds %d matchers; the limit is %d", len(in.Matchers), MaxMatchers)
	}
	for i, m := range in.Matchers {
		if i >= MaxMatchers {
			break
		}
		at := fmt.Sprintf("matchers[%d]", i)
		m.Name = strings.TrimSpace(m.Name)
		switch {
		case m.Name == "" || m.Name == labelPrefix:
			bad(at+".name", "is required: source, severity or a label's name")
		case !utf8.ValidString(m.Name):
			bad(at+".name", "is not valid UTF-8")
		case len(m.Name) > MaxMatcherNameLen:
			bad(at+".name", "is %d bytes long; the limit is %d", len(m.Name), MaxMatcherNameLen)
		}
		switch {
		case !utf8.ValidString(m.Value):
			bad(at+".value", "is not valid UTF-8")
		case len(m.Value) > MaxMatcherValue:
			bad(at+".value", "is %d bytes long; the limit is %d", len(m.Value), MaxMatcherValue)
		case m.IsRegex:
			if _, err := regexp.Compile(m.Value); err != nil {
				bad(at+".value", "is not a valid regular expression (Go RE2 syntax): %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
		case m.Name == FieldSeverity:
			switch alerts.Severity(m.Value) {
			case alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
			default:
				bad(at+".value", "%q is not a severity; use critical, warning or info (or is_regex: true)", m.Value)
			}
		}
		s.Matchers = append(s.Matchers, Matcher{Name: m.Name, Value: m.Value, IsRegex: m.IsRegex})
	}
	if len(fields) == 0 {
		if err := s.compile(); err != nil {
			bad("matchers", "%v", err)
		} else if everyMatcherMatchesEmpty(s.Matchers) {
			bad("matchers", "every matcher matches an empty value, so the silence would catch almost every alert; match at least one non-empty value")
		}
	}
	s.StartsAt = in.StartsAt.UTC().Truncate(time.Millisecond)
	if s.StartsAt.Before(now) {
		s.StartsAt = now
	}
	switch {
	case !in.EndsAt.IsZero() && in.Duration != 0:
		bad("duration", "give ends_at or duration, not both")
	case !in.EndsAt.IsZero():
		s.EndsAt = in.EndsAt.UTC().Truncate(time.Millisecond)
		switch {
		case !s.EndsAt.After(now):
			bad("ends_at", "is not in the future (now is %s)", now.Format(time.RFC3339))
		case !s.EndsAt.After(s.StartsAt):
			bad("ends_at", "must be after starts_at (%s)", s.StartsAt.Format(time.RFC3339))
		}
	case in.Duration > 0:
		s.EndsAt = s.StartsAt.Add(in.Duration).Truncate(time.Millisecond)
		if !s.EndsAt.After(s.StartsAt) {
			bad("duration", "must be at least 1ms")
		}
	case in.Duration < 0:
		bad("duration", "must be positive, such as \"2h\"")
	default:
		bad("ends_at", "is required: give ends_at (RFC 3339) or duration (such as \"2h\")")
	}
	if !s.EndsAt.IsZero() && s.EndsAt.Sub(s.StartsAt) > maxDuration {
		field := "ends_at"
		if in.EndsAt.IsZero() {
			field = "duration"
		}
		bad(field, "makes the silence last %v; the limit is %v", s.EndsAt.Sub(s.StartsAt).Round(time.Second), maxDuration)
	}
	switch {
	case !utf8.ValidString(s.Comment):
		bad("comment", "is not valid UTF-8")
	case utf8.RuneCountInString(s.Comment) > MaxCommentLen:
		bad("comment", "is %d characters long; the limit is %d", utf8.RuneCountInString(s.Comment), MaxCommentLen)
	}
	switch {
	case s.CreatedBy == "":
		bad("created_by", "is required: say who creates the silence")
	case !utf8.ValidString(s.CreatedBy):
		bad("created_by", "is not valid UTF-8")
	case utf8.RuneCountInString(s.CreatedBy) > MaxCreatedByLen:
		bad("created_by", "is %d characters long; the limit is %d", utf8.RuneCountInString(s.CreatedBy), MaxCreatedByLen)
	}
	if len(fields) > 0 {
		return Silence{}, &jobs.ValidationError{Fields: fields}
	}
	return s, nil
}

func everyMatcherMatchesEmpty(ms []Matcher) bool {
	for i := range ms {
		if !ms[i].matchesEmpty() {
			return false
		}
	}
	return true
}
