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
	maxMatchers       = 32
	maxMatcherNameLen = 256
	maxMatcherValue   = alerts.MaxLabelLen
	MaxCommentLen     = 1024
	maxCreatedByLen   = 256
	maxIDLen          = 64
)

// Matcher names with a meaning of their own: the alert's source and
// severity. Any other name is a label's; "labels." followed by a name
// always means the label, so that a label called source or severity can be
// matched too.
const (
	fieldSource   = "source"
	fieldSeverity = "severity"
	labelPrefix   = "labels."
)

// state is where a silence is in its life.
type state string

// The states of a silence.
const (
	// statePending: it starts in the future.
	statePending state = "pending"
	// stateActive: it is in force; matching alerts are not sent.
	stateActive state = "active"
	// stateExpired: its end has passed; it is kept for the retention.
	stateExpired state = "expired"
)

// Matcher is one condition of a silence, as in Alertmanager: the alert's
// value named Name equals Value or, with IsRegex, matches the regular
// expression Value as a whole (Go RE2 syntax). A missing label counts as
// the empty value.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"is_regex"`

	re   *regexp.Regexp // compiled Value when IsRegex
	size int            // instructions of re's program (programSize)
}

// Silence mutes the alerts that all of its matchers match, from StartsAt
// until EndsAt.
type Silence struct {
	ID       string    `json:"id"`
	Matchers []Matcher `json:"matchers"`
	// All is true when the creator asked for a silence that may catch
	// (nearly) every alert (see broadness); only then is one stored.
	All      bool      `json:"all"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Comment  string    `json:"comment"`
	// CreatedBy names the creator: the API token's name, or what the
	// Go caller set (a Telegram user for a silence button).
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	// ProgramSize is the instructions of its regular expressions'
	// programs together: what it takes of Config.MaxLiveProgram.
	ProgramSize int `json:"program_size"`
}

// State returns the silence's state at now.
func (s *Silence) State(now time.Time) state {
	switch {
	case !now.Before(s.EndsAt):
		return stateExpired
	case now.Before(s.StartsAt):
		return statePending
	}
	return stateActive
}

// ActiveAt reports whether the silence is in force at now.
func (s *Silence) ActiveAt(now time.Time) bool { return s.State(now) == stateActive }

// Matches reports whether every matcher of the silence holds for a. The
// silences the Store matches alerts against are compiled once; on one
// that Get or List returned, each regular expression is compiled for the
// call.
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
	case fieldSource:
		return a.Source
	case fieldSeverity:
		return string(a.Severity)
	}
	return a.Labels[strings.TrimPrefix(m.Name, labelPrefix)]
}

func (m *Matcher) matches(a *alerts.Alert) bool {
	v := m.value(a)
	if !m.IsRegex {
		return v == m.Value
	}
	if len(v) > maxMatchedLen {
		return false
	}
	re := m.re
	if re == nil {
		var err error
		if re, err = compileMatcher(m.Value); err != nil {
			return false
		}
	}
	return re.MatchString(v)
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
		re, err := compileMatcher(m.Value)
		if err != nil {
			return fmt.Errorf("silence %s: matchers[%d]: %w", s.ID, i, err)
		}
		m.re = re
	}
	return nil
}

// hasRegex reports whether any matcher is a regular expression.
func (s *Silence) hasRegex() bool {
	for i := range s.Matchers {
		if s.Matchers[i].IsRegex {
			return true
		}
	}
	return false
}

// Input is what a caller asks for when creating a silence.
type Input struct {
	// Matchers must all hold for an alert to be silenced; at least one.
	Matchers []Matcher
	// All allows a silence whose every matcher matches (nearly) any
	// value, and so (nearly) every alert; without it one is refused. The
	// API lets only a token with the operate scope set it.
	All bool
	// StartsAt is when the silence begins; zero, or a time in the past,
	// means now.
	StartsAt time.Time
	// EndsAt is when it ends; or leave it zero and set Duration.
	EndsAt time.Time
	// Duration is EndsAt - StartsAt, when EndsAt is zero.
	Duration time.Duration
	// Comment says why; optional.
	Comment string
	// CreatedBy says who; required. The API sets it to the token's name.
	CreatedBy string
}

// fieldErrors collects the bad fields of an input.
type fieldErrors []jobs.FieldError

func (f *fieldErrors) add(field, format string, args ...any) {
	*f = append(*f, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// build checks in against the limits of cfg (filled by WithDefaults) and
// returns the silence it describes (without id), its regular expressions
// compiled, or a *jobs.ValidationError naming every bad field with its
// JSON name.
func (in Input) build(now time.Time, cfg Config) (Silence, error) {
	var bad fieldErrors
	now = now.UTC().Truncate(time.Millisecond)
	s := Silence{All: in.All, Comment: strings.TrimSpace(in.Comment), CreatedBy: strings.TrimSpace(in.CreatedBy), CreatedAt: now}
	s.Matchers = bad.matchers(in.Matchers, cfg.MaxMatcherProgram)
	if len(bad) == 0 {
		s.ProgramSize = bad.programs(s.Matchers, cfg.MaxSilenceProgram)
	}
	if len(bad) == 0 && !in.All {
		bad.breadth(s.Matchers)
	}
	bad.times(&s, in, now, cfg.MaxDuration)
	bad.texts(&s)
	if len(bad) > 0 {
		return Silence{}, &jobs.ValidationError{Fields: bad}
	}
	return s, nil
}

// matchers checks each matcher, and compiles the regular expressions
// within maxProgram instructions each.
func (bad *fieldErrors) matchers(ms []Matcher, maxProgram int) []Matcher {
	switch {
	case len(ms) == 0:
		bad.add("matchers", "must hold at least one matcher, such as {\"name\": \"severity\", \"value\": \"warning\"}")
	case len(ms) > maxMatchers:
		bad.add("matchers", "holds %d matchers; the limit is %d", len(ms), maxMatchers)
	}
	out := make([]Matcher, 0, min(len(ms), maxMatchers))
	for i, m := range ms {
		if i >= maxMatchers {
			break
		}
		at := fmt.Sprintf("matchers[%d]", i)
		m = Matcher{Name: strings.TrimSpace(m.Name), Value: m.Value, IsRegex: m.IsRegex}
		switch {
		case m.Name == "" || m.Name == labelPrefix:
			bad.add(at+".name", "is required: source, severity or a label's name")
		case !utf8.ValidString(m.Name):
			bad.add(at+".name", "is not valid UTF-8")
		case len(m.Name) > maxMatcherNameLen:
			bad.add(at+".name", "is %d bytes long; the limit is %d", len(m.Name), maxMatcherNameLen)
		}
		bad.value(at+".value", &m, maxProgram)
		out = append(out, m)
	}
	return out
}

// value checks one matcher's value; a regular expression is measured
// before it is compiled.
func (bad *fieldErrors) value(field string, m *Matcher, maxProgram int) {
	switch {
	case !utf8.ValidString(m.Value):
		bad.add(field, "is not valid UTF-8")
	case len(m.Value) > maxMatcherValue:
		bad.add(field, "is %d bytes long; the limit is %d", len(m.Value), maxMatcherValue)
	case m.IsRegex:
		size, exact, err := programSize(m.Value, maxProgram)
		switch {
		case err != nil:
			bad.add(field, "%s", regexError(err))
		case size > maxProgram:
			about := "compiles to"
			if !exact {
				about = "would compile to about"
			}
			bad.add(field, "%s %d regular-expression instructions; the limit per matcher is %d: "+
				"use a shorter pattern with smaller or fewer repetitions ({n,m}), or an exact value", about, size, maxProgram)
		default:
			re, err := compileMatcher(m.Value)
			if err != nil {
				bad.add(field, "%s", regexError(err))
				return
			}
			m.re, m.size = re, size
		}
	case m.Name == fieldSeverity:
		switch alerts.Severity(m.Value) {
		case alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
		default:
			bad.add(field, "%q is not a severity; use critical, warning or info (or is_regex: true)", m.Value)
		}
	}
}

// programs returns the instructions of the matchers' programs together,
// and refuses more than maxProgram.
func (bad *fieldErrors) programs(ms []Matcher, maxProgram int) int {
	total := 0
	for i := range ms {
		total += ms[i].size
	}
	if total > maxProgram {
		bad.add("matchers", "the regular expressions compile to %d instructions together; the limit per silence is %d: "+
			"split the silence, shorten its patterns, or use exact values", total, maxProgram)
	}
	return total
}

// breadth refuses a silence every one of whose matchers matches (nearly)
// any value, naming each: it would mute (nearly) every alert.
func (bad *fieldErrors) breadth(ms []Matcher) {
	why := make([]string, len(ms))
	for i := range ms {
		if why[i] = ms[i].broadness(); why[i] == "" {
			return
		}
	}
	for i := range ms {
		bad.add(fmt.Sprintf("matchers[%d].value", i), "%s, and so does every other matcher of the silence: it would mute (nearly) "+
			"every alert; narrow a matcher, or add \"all\": true to the body to mute everything on purpose (it needs the operate scope)", why[i])
	}
}

// times sets the silence's start and end from in.
func (bad *fieldErrors) times(s *Silence, in Input, now time.Time, maxDuration time.Duration) {
	s.StartsAt = in.StartsAt.UTC().Truncate(time.Millisecond)
	if s.StartsAt.Before(now) {
		s.StartsAt = now
	}
	switch {
	case !in.EndsAt.IsZero() && in.Duration != 0:
		bad.add("duration", "give ends_at or duration, not both")
	case !in.EndsAt.IsZero():
		s.EndsAt = in.EndsAt.UTC().Truncate(time.Millisecond)
		switch {
		case !s.EndsAt.After(now):
			bad.add("ends_at", "is not in the future (now is %s)", now.Format(time.RFC3339))
		case !s.EndsAt.After(s.StartsAt):
			bad.add("ends_at", "must be after starts_at (%s)", s.StartsAt.Format(time.RFC3339))
		}
	case in.Duration > 0:
		s.EndsAt = s.StartsAt.Add(in.Duration).Truncate(time.Millisecond)
		if !s.EndsAt.After(s.StartsAt) {
			bad.add("duration", "must be at least 1ms")
		}
	case in.Duration < 0:
		bad.add("duration", "must be positive, such as \"2h\"")
	default:
		bad.add("ends_at", "is required: give ends_at (RFC 3339) or duration (such as \"2h\")")
	}
	if !s.EndsAt.IsZero() && s.EndsAt.Sub(s.StartsAt) > maxDuration {
		field := "ends_at"
		if in.EndsAt.IsZero() {
			field = "duration"
		}
		bad.add(field, "makes the silence last %v; the limit is %v", s.EndsAt.Sub(s.StartsAt).Round(time.Second), maxDuration)
	}
}

// texts checks the comment and the creator.
func (bad *fieldErrors) texts(s *Silence) {
	switch {
	case !utf8.ValidString(s.Comment):
		bad.add("comment", "is not valid UTF-8")
	case utf8.RuneCountInString(s.Comment) > MaxCommentLen:
		bad.add("comment", "is %d characters long; the limit is %d", utf8.RuneCountInString(s.Comment), MaxCommentLen)
	}
	switch {
	case s.CreatedBy == "":
		bad.add("created_by", "is required: say who creates the silence")
	case !utf8.ValidString(s.CreatedBy):
		bad.add("created_by", "is not valid UTF-8")
	case utf8.RuneCountInString(s.CreatedBy) > maxCreatedByLen:
		bad.add("created_by", "is %d characters long; the limit is %d", utf8.RuneCountInString(s.CreatedBy), maxCreatedByLen)
	}
}
