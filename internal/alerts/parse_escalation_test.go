package alerts

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// oncallFile is a routing file with a schedule, a 3-step policy and a
// route escalating through it.
const oncallFile = `
defaults:
  bot: pages
schedules:
  - name: primary
    time_zone: Europe/Berlin
    chat: "-1001000000009"
    users:
      - {id: 1001, name: Alice, username: alice}
      - {id: 1002, name: Bob, username: bob_ops}
      - {id: 1003, name: Carol}
    layers:
      - {users: ["@alice", "@bob_ops", 1003], shift: weekly, handoff: "09:00", start: 2026-01-05}
escalation_policies:
  - name: db-critical
    steps:
      - notify: [{chat: "-1001000000001", thread: 7, name: DB team}]
        wait: 2m
      - notify: {on_call: primary}
        wait: 4m
      - notify: [{user: 1003}, {user: "@bob_ops"}, {user: {id: 1009, name: Erin, username: "@erin_ops"}}]
        wait: 10m
    repeat: 1
    repeat_interval: 30m
routes:
  - name: db
    match: {labels: {team: db}}
    escalation: db-critical
    destinations: [{chat: "-1001000000001", thread: 7}]
  - name: rest
    default: true
    destinations: ["-1001000000002"]
`

func TestParseEscalation(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, oncallFile)
	c, sc := tb.Catalog(), tb.Schedules()
	if sc.Bot != "pages" || len(sc.Schedules) != 1 || sc.Schedules["primary"].Chat != "-1001000000009" {
		t.Fatalf("schedules %+v", sc)
	}
	p, ok := c.Policies["db-critical"]
	if !ok || len(p.Steps) != 3 || p.Repeat != 1 || p.RepeatInterval != 30*time.Minute {
		t.Fatalf("policy %+v", p)
	}
	if s := p.Steps[0]; s.Wait != 2*time.Minute || len(s.Targets) != 1 || s.Targets[0].Chat != "-1001000000001" || s.Targets[0].Topic != 7 || s.Targets[0].Name != "DB team" {
		t.Errorf("step 1 %+v", s)
	}
	if s := p.Steps[1]; s.Wait != 4*time.Minute || len(s.Targets) != 1 || s.Targets[0].Schedule != "primary" {
		t.Errorf("step 2 %+v", s)
	}
	want := []oncall.User{{ID: 1003, Name: "Carol"}, {ID: 1002, Name: "Bob", Username: "bob_ops"}, {ID: 1009, Name: "Erin", Username: "erin_ops"}}
	s := p.Steps[2]
	for i, u := range want {
		if i >= len(s.Targets) || s.Targets[i].User != u {
			t.Errorf("step 3 targets %+v, want users %+v", s.Targets, want)
			break
		}
	}
	again, err := oncall.Parse("source", sc.Source)
	if err != nil || len(again) != 1 || again[0].Name != "primary" || again[0].Chat != "-1001000000009" || len(again[0].Layers[0].Users) != 3 {
		t.Errorf("the schedules written out read back as %+v, %v", again, err)
	}
	if tb.routes[0].escalation != "db-critical" || tb.fallback.escalation != "" {
		t.Errorf("routes' escalation %q, %q", tb.routes[0].escalation, tb.fallback.escalation)
	}
}

// Each mistake in a policy or a route's escalation is reported at its
// line and column with the fix.
func TestParseEscalationErrors(t *testing.T) {
	t.Parallel()
	const head = "schedules:\n  - {name: primary, time_zone: UTC, layers: [{users: [{id: 1, name: A, username: alice}], shift: daily, handoff: \"09:00\", start: 2026-01-05}]}\n"
	const route = "routes:\n  - {name: r, default: true, destinations: [\"1\"]}\n"
	cases := []struct{ name, src, want string }{
		{"unknown policy", head + "routes:\n  - {name: r, default: true, destinations: [\"1\"], escalation: nope}\n",
			`routes.yaml:4:63: routes[0].escalation: "nope" names no escalation policy of this file; name one of escalation_policies:`},
		{"coalescing route", head + "escalation_policies:\n  - {name: p, steps: [{notify: {user: 1}}]}\nroutes:\n  - {name: r, default: true, coalesce: true, destinations: [\"1\"], escalation: p}\n",
			`routes.yaml:6:67: routes[0].escalation: an escalated alert needs a message of its own to reply to, and this route coalesces`},
		{"unknown schedule", head + "escalation_policies:\n  - name: p\n    steps:\n      - notify: [{on_call: secondary}]\n" + route,
			`routes.yaml:6:28: escalation_policies[0].steps[0].notify[0].on_call: "secondary" names no schedule of this file`},
		{"unknown user", head + "escalation_policies:\n  - name: p\n    steps:\n      - notify: [{user: \"@bob\"}]\n" + route,
			`routes.yaml:6:25: escalation_policies[0].steps[0].notify[0].user: "@bob" names no user of the schedules`},
		{"missing wait", head + "escalation_policies:\n  - name: p\n    steps:\n      - notify: [{user: 1}]\n      - notify: [{user: 1}]\n" + route,
			`routes.yaml:6:9: escalation_policies[0].steps[0].wait: is missing; add wait:`},
		{"wait too short", head + "escalation_policies:\n  - name: p\n    steps:\n      - {notify: [{user: 1}], wait: 10ms}\n" + route,
			`routes.yaml:6:37: escalation_policies[0].steps[0].wait: 10ms is out of range; wait 1s to 24h0m0s`},
		{"two targets in one", head + "escalation_policies:\n  - name: p\n    steps:\n      - notify: [{user: 1, on_call: primary}]\n" + route,
			`routes.yaml:6:18: escalation_policies[0].steps[0].notify[0]: names no target or more than one; give exactly one of chat:, user: and on_call:`},
		{"repeat without a last wait", head + "escalation_policies:\n  - name: p\n    repeat: 2\n    steps:\n      - notify: [{user: 1}]\n" + route,
			`routes.yaml:5:13: escalation_policies[0].repeat: the steps would start again the moment the last one notified; give the last step a wait:`},
		{"bad chat", head + "escalation_policies:\n  - name: p\n    steps:\n      - notify: [{chat: \"@ab\"}]\n" + route,
			`routes.yaml:6:25: escalation_policies[0].steps[0].notify[0].chat: "@ab" is not a valid @username`},
		{"duplicate", head + "escalation_policies:\n  - {name: p, steps: [{notify: {user: 1}}]}\n  - {name: p, steps: [{notify: {user: 1}}]}\n" + route,
			`routes.yaml:5:12: escalation_policies[1].name: the policy "p" is defined twice (first at line 4)`},
		{"typo", head + "escalation_policies:\n  - {name: p, step: [{notify: {user: 1}}]}\n" + route,
			`routes.yaml:4:15: escalation_policies[0].step: unknown key; did you mean "steps"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRoutes("routes.yaml", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// The worked example of docs/ONCALL.md is a valid routing file, and its
// schedules say what the page says about the week of 6 April 2026.
func TestOnCallDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/ONCALL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/ONCALL.md has no yaml block")
	}
	tb := mustParse(t, src)
	c := tb.Schedules()
	at := time.Date(2026, 4, 8, 12, 0, 0, 0, time.UTC)
	for name, want := range map[string]string{"primary": "Bob", "secondary": "Carol"} {
		if u, _, _ := c.Schedules[name].OnCall(at); u.Name != want {
			t.Errorf("%s on 8 April: %s, want %s", name, u.Name, want)
		}
	}
	if u, sh, _ := c.Schedules["primary"].Next(at); u.Name != "Carol" || !sh.Start.Equal(time.Date(2026, 4, 13, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("next in primary: %s from %s, want Carol from 13 April 09:00 CEST", u.Name, sh.Start)
	}
	if p := tb.Catalog().Policies["db-critical"]; len(p.Steps) != 3 || p.Steps[1].Wait != 4*time.Minute || p.RepeatInterval != 30*time.Minute {
		t.Errorf("db-critical: %+v", p)
	}
}

// The escalation example of docs/ROUTING.md is a valid routing file.
func TestRoutingDocEscalationExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/ROUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Escalation and schedules")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	src, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/ROUTING.md has no escalation example")
	}
	if tb := mustParse(t, src); len(tb.Catalog().Policies) != 1 || len(tb.Schedules().Schedules) != 1 {
		t.Errorf("catalog %+v, schedules %+v", tb.Catalog(), tb.Schedules())
	}
}
