package silences

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

func TestMatching(t *testing.T) {
	t.Parallel()
	a := alerts.Alert{Title: "disk", Source: "alertmanager", Severity: alerts.SeverityWarning,
		Labels: map[string]string{"team": "db", "service": "api-gw", "source": "node-exporter"}}
	cases := []struct {
		name     string
		matchers []Matcher
		want     bool
	}{
		{"source equal", []Matcher{eq("source", "alertmanager")}, true},
		{"source differs", []Matcher{eq("source", "grafana")}, false},
		{"severity equal", []Matcher{eq("severity", "warning")}, true},
		{"severity differs", []Matcher{eq("severity", "critical")}, false},
		{"severity regex", []Matcher{re("severity", "warning|critical")}, true},
		{"label equal", []Matcher{eq("team", "db")}, true},
		{"label differs", []Matcher{eq("team", "web")}, false},
		{"label regex matches whole value", []Matcher{re("service", "api-.*")}, true},
		{"label regex anchored at the start", []Matcher{re("service", "gw")}, false},
		{"label regex anchored at the end", []Matcher{re("service", "api")}, false},
		{"missing label equals empty", []Matcher{eq("team", "db"), eq("region", "")}, true},
		{"missing label against a value", []Matcher{eq("region", "eu")}, false},
		{"missing label against a regex", []Matcher{re("region", "eu|")}, true},
		{"labels. prefix reaches a label named source", []Matcher{eq("labels.source", "node-exporter")}, true},
		{"bare source is the alert's source", []Matcher{eq("source", "node-exporter")}, false},
		{"all must hold", []Matcher{eq("team", "db"), eq("severity", "critical")}, false},
		{"all hold", []Matcher{eq("team", "db"), eq("severity", "warning"), re("source", "alert.*")}, true},
		{"case-sensitive", []Matcher{eq("team", "DB")}, false},
		{"no matchers match nothing", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Silence{ID: "x", Matchers: c.matchers}
			if err := s.compile(); err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(&a); got != c.want {
				t.Fatalf("Matches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSilenceState(t *testing.T) {
	t.Parallel()
	s := Silence{StartsAt: t0, EndsAt: t0.Add(time.Hour)}
	for at, want := range map[time.Time]state{
		t0.Add(-time.Millisecond): statePending, t0: stateActive, t0.Add(59 * time.Minute): stateActive,
		t0.Add(time.Hour): stateExpired, t0.Add(2 * time.Hour): stateExpired,
	} {
		if got := s.State(at); got != want {
			t.Errorf("State(%v) = %s, want %s", at, got, want)
		}
	}
}

// TestInputValidation: every mistake is reported under its JSON field
// name, all at once.
func TestInputValidation(t *testing.T) {
	t.Parallel()
	ok := Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour, CreatedBy: "ana"}
	cases := []struct {
		name   string
		edit   func(*Input)
		fields []string
	}{
		{"no matchers", func(in *Input) { in.Matchers = nil }, []string{"matchers"}},
		{"too many matchers", func(in *Input) {
			for i := 0; i <= maxMatchers; i++ {
				in.Matchers = append(in.Matchers, eq("team", "db"))
			}
		}, []string{"matchers"}},
		{"empty name", func(in *Input) { in.Matchers = []Matcher{eq(" ", "x")} }, []string{"matchers[0].name"}},
		{"bad regex", func(in *Input) { in.Matchers = append(in.Matchers, re("service", "api-(")) }, []string{"matchers[1].value"}},
		{"unknown severity", func(in *Input) { in.Matchers = []Matcher{eq("severity", "high")} }, []string{"matchers[0].value"}},
		{"value too long", func(in *Input) { in.Matchers = []Matcher{eq("team", strings.Repeat("x", maxMatcherValue+1))} }, []string{"matchers[0].value"}},
		{"matches everything", func(in *Input) { in.Matchers = []Matcher{re("team", ".*"), eq("region", "")} }, []string{"matchers[0].value", "matchers[1].value"}},
		{"no end", func(in *Input) { in.Duration = 0 }, []string{"ends_at"}},
		{"end and duration", func(in *Input) { in.EndsAt = t0.Add(time.Hour) }, []string{"duration"}},
		{"end in the past", func(in *Input) { in.Duration = 0; in.EndsAt = t0.Add(-time.Second) }, []string{"ends_at"}},
		{"end before start", func(in *Input) { in.Duration = 0; in.StartsAt = t0.Add(2 * time.Hour); in.EndsAt = t0.Add(time.Hour) }, []string{"ends_at"}},
		{"negative duration", func(in *Input) { in.Duration = -time.Hour }, []string{"duration"}},
		{"too long", func(in *Input) { in.Duration = defaultMaxDuration + time.Hour }, []string{"duration"}},
		{"too long by end", func(in *Input) { in.Duration = 0; in.EndsAt = t0.Add(defaultMaxDuration + time.Hour) }, []string{"ends_at"}},
		{"no creator", func(in *Input) { in.CreatedBy = "  " }, []string{"created_by"}},
		{"comment too long", func(in *Input) { in.Comment = strings.Repeat("é", MaxCommentLen+1) }, []string{"comment"}},
		{"several at once", func(in *Input) { in.Matchers = nil; in.Duration = 0; in.CreatedBy = "" }, []string{"matchers", "ends_at", "created_by"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			in.Matchers = append([]Matcher(nil), ok.Matchers...)
			c.edit(&in)
			_, err := in.build(t0, Config{}.WithDefaults())
			var verr *jobs.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("err = %v, want a validation error", err)
			}
			var got []string
			for _, f := range verr.Fields {
				got = append(got, f.Field)
			}
			if strings.Join(got, ",") != strings.Join(c.fields, ",") {
				t.Fatalf("fields %v, want %v (%v)", got, c.fields, err)
			}
		})
	}
	// A start in the past is now; the duration counts from the start.
	s, err := Input{Matchers: ok.Matchers, StartsAt: t0.Add(-time.Hour), Duration: time.Hour, CreatedBy: " ana "}.build(t0, Config{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if !s.StartsAt.Equal(t0) || !s.EndsAt.Equal(t0.Add(time.Hour)) || s.CreatedBy != "ana" || !s.CreatedAt.Equal(t0) {
		t.Fatalf("built %+v", s)
	}
}
