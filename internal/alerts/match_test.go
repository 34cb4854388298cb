package alerts

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// routingTable is the table of the matching tests.
const routingTable = `
routes:
  - name: db-pages
    match:
      severity: [critical, warning]
      labels: {team: db}
    destinations: [1]
  - name: api-regex
    match:
      source: [alertmanager, grafana]
      labels: {service: "=~api-.*"}
    destinations: [2]
  - name: all-critical
    match: {severity: critical}
    destinations: [3]
  - name: github
    match: {source: "=~git(hub|lab)"}
    destinations: [4]
  - name: no-env
    match:
      source: cron
      labels: {env: "=~"}
    destinations: [5]
  - name: rest
    default: true
    destinations: [9]
`

func TestRouteMatching(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, routingTable)
	tests := []struct {
		name  string
		alert Alert
		want  []string
	}{
		{"fan-out: team db critical also matches all-critical",
			Alert{Severity: SeverityCritical, Labels: map[string]string{"team": "db"}}, []string{"db-pages", "all-critical"}},
		{"severity list: warning", Alert{Severity: SeverityWarning, Labels: map[string]string{"team": "db"}}, []string{"db-pages"}},
		{"severity list excludes info: default route", Alert{Severity: SeverityInfo, Labels: map[string]string{"team": "db"}}, []string{"rest"}},
		{"label exact is case-sensitive", Alert{Severity: SeverityWarning, Labels: map[string]string{"team": "DB"}}, []string{"rest"}},
		{"label regex, source list", Alert{Source: "grafana", Severity: SeverityInfo, Labels: map[string]string{"service": "api-gw"}}, []string{"api-regex"}},
		{"regex is anchored at both ends", Alert{Source: "grafana", Severity: SeverityInfo, Labels: map[string]string{"service": "old-api-gw"}}, []string{"rest"}},
		{"source outside the list", Alert{Source: "sentry", Severity: SeverityInfo, Labels: map[string]string{"service": "api-gw"}}, []string{"rest"}},
		{"missing label does not match a value", Alert{Source: "alertmanager", Severity: SeverityInfo}, []string{"rest"}},
		{"source regex", Alert{Source: "gitlab", Severity: SeverityInfo}, []string{"github"}},
		{"source regex anchored", Alert{Source: "github-enterprise", Severity: SeverityInfo}, []string{"rest"}},
		{"a missing label is the empty value", Alert{Source: "cron", Severity: SeverityInfo}, []string{"no-env"}},
		{"an empty regex matches only the empty value", Alert{Source: "cron", Severity: SeverityInfo, Labels: map[string]string{"env": "prod"}}, []string{"rest"}},
		{"everything at once", Alert{Source: "github", Severity: SeverityCritical, Labels: map[string]string{"team": "db"}},
			[]string{"db-pages", "all-critical", "github"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := tt.alert
			a.Title = "x"
			if err := a.Normalize(time.Now()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range tb.match(&a) {
				got = append(got, r.name)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("routes %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchWithoutDefault(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, "routes:\n  - name: everything\n    destinations: [1]\n  - name: db\n    match: {labels: {team: db}}\n    destinations: [2]\n")
	a := Alert{Title: "x", Severity: SeverityInfo}
	if got := tb.match(&a); len(got) != 1 || got[0].name != "everything" {
		t.Fatalf("a route without match takes every alert; got %v", got)
	}
	narrow := mustParse(t, "routes:\n  - name: db\n    match: {labels: {team: db}}\n    destinations: [2]\n")
	if got := narrow.match(&a); len(got) != 0 {
		t.Fatalf("no route should match, got %v", got)
	}
}

func TestDispatchNoRoute(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, "routes:\n  - name: db\n    match: {labels: {team: db}}\n    destinations: [2]\n", rec)
	batch := []Alert{
		{Title: "routed", Labels: map[string]string{"team": "db"}},
		{Title: "lost", Source: "cron", Severity: "warning"},
	}
	_, err := r.Dispatch(context.Background(), batch)
	if !errors.Is(err, ErrNoRoute) {
		t.Fatalf("error %v, want ErrNoRoute", err)
	}
	for _, w := range []string{"alerts[1]", `"cron"`, "warning"} {
		if !contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
	if len(rec.reqs) != 0 {
		t.Fatalf("%d messages enqueued although the batch failed", len(rec.reqs))
	}
}
