package oncall_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

func TestParseFile(t *testing.T) {
	data, err := os.ReadFile("testdata/schedules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := oncall.Parse("schedules.yaml", data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(got) != 2 || got[0].Name != "primary" || got[1].Name != "night" {
		t.Fatalf("Parse = %+v, want primary and night", got)
	}
	for _, s := range got {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", s.Name, err)
		}
	}
	p := got[0]
	if p.Chat != "-1001234567890" || p.Topic != 7 || got[1].Chat != "" {
		t.Errorf("chats = %q/%d and %q, want -1001234567890/7 and none", p.Chat, p.Topic, got[1].Chat)
	}
	w := p.Layers[0]
	if len(w.Users) != 3 || w.Users[0] != alice || w.Users[1] != bob || w.Users[2] != carol {
		t.Errorf("weekly users = %v, want Alice, Bob, Carol", w.Users)
	}
	if w.Length != oncall.Weekly || w.Handoff != (oncall.Clock{Hour: 9}) || w.Weekday != time.Monday || w.Location.String() != "Europe/Berlin" {
		t.Errorf("weekly layer = %+v", w)
	}
	if !w.Start.Equal(utc(t, "2026-01-04T23:00")) {
		t.Errorf("start = %s, want 2026-01-05 00:00 CET", w.Start)
	}
	if o := p.Overrides[0]; o.User != carol || !o.Start.Equal(utc(t, "2026-03-28T11:00")) || !o.End.Equal(utc(t, "2026-03-30T10:00")) {
		t.Errorf("override 0 = %+v, want Carol 2026-03-28 11:00 to 2026-03-30 10:00 UTC", o)
	}
	if o := p.Overrides[1]; o.User != dana || !o.Start.Equal(utc(t, "2026-03-29T00:00")) {
		t.Errorf("override 1 = %+v, want Dana from 2026-03-29 00:00 UTC", o)
	}
	for _, c := range []struct{ at, who string }{
		{"2026-03-28T10:00", "Carol"}, {"2026-03-29T03:00", "Dana"}, {"2026-03-30T09:00", "Carol"},
		{"2026-03-30T10:00", "Alice"}, {"2026-04-04T12:00", "Dana"}, {"2026-04-06T17:00", "Bob"},
	} {
		u, _, ok := p.OnCall(utc(t, c.at))
		if got := name(u, ok); got != c.who {
			t.Errorf("primary at %s UTC: %s, want %s", c.at, got, c.who)
		}
	}
	n := got[1].Layers[0]
	if n.Length != (oncall.Length{Fixed: 12 * time.Hour}) || !n.Start.Equal(utc(t, "2026-03-01T05:00")) {
		t.Errorf("night layer = %+v", n)
	}
}

// parseErrors are files with one mistake each and the start of the
// problem reported.
var parseErrors = map[string]struct{ yaml, want string }{
	"unknown zone": {`
schedules:
  - name: a
    time_zone: Europe/Berln
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:4:16: schedules[0].time_zone: unknown time zone "Europe/Berln"; name an IANA time zone such as Europe/Berlin or America/New_York, or UTC`},
	"no zone": {`
schedules:
  - name: a
    layers:
      - {users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}
`, `f.yaml:5:9: schedules[0].layers[0].time_zone: is missing; add time_zone: to the layer or the schedule`},
	"empty users": {`
schedules:
  - name: a
    time_zone: UTC
    layers:
      - users: []
        shift: daily
        handoff: "09:00"
        start: 2026-01-05
`, `f.yaml:6:16: schedules[0].layers[0].users: the layer has no users; list at least one user`},
	"duplicate user": {`
schedules:
  - name: a
    time_zone: UTC
    layers:
      - users:
          - {id: 7, name: A}
          - {id: 8, name: B}
          - {id: 7, name: A}
        shift: daily
        handoff: "09:00"
        start: 2026-01-05
`, `f.yaml:9:13: schedules[0].layers[0].users[2]: user 7 (A) is listed twice (first at line 7); list each person once`},
	"short shift": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: 30m, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:5:49: schedules[0].layers[0].shift: 30m is shorter than 1h; use a shift of at least 1h, or daily or weekly`},
	"bad handoff": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: 9am, start: 2026-01-05}]
`, `f.yaml:5:65: schedules[0].layers[0].handoff: "9am" is not a time of day; write HH:MM on a 24-hour clock, in quotes, such as "09:00"`},
	"override end before start": {`
schedules:
  - name: a
    time_zone: Europe/Berlin
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
    overrides:
      - user: 1
        start: "2026-03-30T09:00"
        end: "2026-03-28T09:00"
`, `f.yaml:9:14: schedules[0].overrides[0].end: 2026-03-28T09:00:00+01:00 is not after start 2026-03-30T09:00:00+02:00, so the override would be empty; give an end later than the start`},
	"unknown reference": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: ["@nobody"], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:5:23: schedules[0].layers[0].users[0]: "@nobody" names no user of this schedule`},
	"handoff_day on daily": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", handoff_day: mon, start: 2026-01-05}]
`, `f.yaml:5:74: schedules[0].layers[0].handoff_day: applies to weekly shifts only, and the shift is daily`},
	"unknown key": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: daily, handof: "09:00", start: 2026-01-05}]
`, `f.yaml:5:56: schedules[0].layers[0].handof: unknown key; did you mean "handoff"?`},
	"bad user id": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: -3, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:5:28: schedules[0].layers[0].users[0].id: -3 is not a Telegram user id`},
	"duplicate schedule": {`
schedules:
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
  - name: a
    time_zone: UTC
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:6:11: schedules[1].name: the schedule "a" is defined twice (first at line 3)`},
	"bad chat": {`
schedules:
  - name: a
    time_zone: UTC
    chat: "@ab"
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:5:11: schedules[0].chat: "@ab" is not a valid @username`},
	"topic without chat": {`
schedules:
  - name: a
    time_zone: UTC
    thread: 4
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:5:5: schedules[0].thread: a topic without a chat; add chat:`},
	"bad topic": {`
schedules:
  - name: a
    time_zone: UTC
    chat: -100123
    thread: 0
    layers: [{users: [{id: 1, name: A}], shift: daily, handoff: "09:00", start: 2026-01-05}]
`, `f.yaml:6:13: schedules[0].thread: 0 is not a forum topic id`},
}

// Every mistake is reported at its line and column, naming the setting
// and the fix.
func TestParseErrors(t *testing.T) {
	for label, c := range parseErrors {
		_, err := oncall.Parse("f.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", label, err, c.want)
		}
	}
}
