package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// Fair escalation runs at Telegram's own time (scale 1): the fake allows
// one message a second to a chat ("1/1s"), as Telegram does, and so do
// Herald's limits. Each policy DMs the same on-call user (Alice) at step
// 2, fairWait after its alert fired.
const (
	fairFlood      = 60
	fairWait       = 5 * time.Second
	fairFloodChat  = -1002100000001
	fairOtherChat  = -1002100000002
	fairLateBudget = 5 * time.Second
)

// fairRoutes: two policies, "flood" and "other", each its chat at step 1
// and whoever is on call in primary (Alice) at step 2.
func fairRoutes() string {
	var b strings.Builder
	b.WriteString("schedules:\n  - name: primary\n    time_zone: Europe/Berlin\n    layers:\n      - {users: [{id: 1001, name: Alice, username: alice_oncall}], shift: weekly, handoff: \"09:00\", start: 2026-01-05}\n")
	b.WriteString("escalation_policies:\n")
	for _, p := range []struct {
		name string
		chat int64
	}{{"flood", fairFloodChat}, {"other", fairOtherChat}} {
		fmt.Fprintf(&b, "  - name: %s\n    steps:\n      - {notify: [{chat: \"%d\"}], wait: %s}\n      - {notify: [{on_call: primary}]}\n", p.name, p.chat, fairWait)
	}
	b.WriteString("routes:\n")
	for _, p := range []struct {
		name string
		chat int64
	}{{"flood", fairFloodChat}, {"other", fairOtherChat}} {
		fmt.Fprintf(&b, "  - name: %s\n    match: {labels: {team: %s}}\n    escalation: %s\n    buttons: [ack]\n    destinations: [\"%d\"]\n", p.name, p.name, p.name, p.chat)
	}
	return b.String()
}

// TestEscalationFairAcrossPolicies is issue 37's target 9: 60 critical
// alerts of one policy whose step 2 DMs Alice, then one critical alert of
// another policy whose step 2 DMs her too. Telegram sends one message a
// second to her chat, so the flood's 60 DMs take a minute whatever Herald
// does; the other policy's step-2 DM must not wait behind them: it
// arrives within fairLateBudget of its due time. Every DM of the flood
// arrives too (nothing is dropped).
func TestEscalationFairAcrossPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 2, NoProducer: true, Timeout: 4 * time.Minute,
		Fake: telegramfake.Config{TimeScale: 1}})
	routes := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(routes, []byte(fairRoutes()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &escFleet{s: s, env: []string{"HERALD_ROUTES_FILE=" + routes}, procs: make([]*fleet.Proc, 1), bases: make([]string, 1)}
	f.startProducer(t, 0, "producer-1")

	post := func(key, title, team string) time.Time {
		body, _ := json.Marshal(map[string]any{"title": title, "severity": "critical", "key": key, "labels": map[string]string{"team": team}})
		if code, out := call(t, s.Fleet, http.MethodPost, f.bases[0]+"/v1/alerts", body, nil); code != http.StatusAccepted {
			t.Fatalf("alert %s: %d %s", key, code, out)
		}
		return time.Now()
	}
	var floodDue time.Time
	for i := range fairFlood {
		at := post(fmt.Sprintf("f%03d", i), fmt.Sprintf("queue lag f%03d", i), "flood")
		if i == 0 {
			floodDue = at.Add(fairWait)
		}
	}
	// The other policy's alert fires while the flood's step-2 DMs are
	// still ahead: its step 2 is due about a second after theirs.
	time.Sleep(time.Second)
	fired := post("o000", "payments down o000", "other")
	due := fired.Add(fairWait)

	dmTo := func(title string) (telegramfake.Message, bool) {
		for _, m := range s.Fake.Messages() {
			if m.ChatID == aliceID && strings.HasPrefix(m.Text, "🚨 Escalated to you: "+title+"\n") {
				return m, true
			}
		}
		return telegramfake.Message{}, false
	}
	var got telegramfake.Message
	waitFor(t, s.Ctx, "the other policy's step-2 DM", func() bool {
		var ok bool
		got, ok = dmTo("payments down o000")
		return ok
	})
	late := got.At.Sub(due)
	before := 0
	for _, m := range s.Fake.Messages() {
		if m.ChatID == aliceID && m.At.Before(got.At) {
			before++
		}
	}
	t.Logf("fair escalation: the other policy's step-2 DM came %v after its due time (%v after its alert fired); %d of the flood's %d DMs to the same user came before it",
		late.Round(time.Millisecond), got.At.Sub(fired).Round(time.Millisecond), before, fairFlood)
	if late > fairLateBudget {
		t.Errorf("the other policy's step-2 DM came %v after its due time; want within %v however many DMs another policy queued for the same person", late.Round(time.Millisecond), fairLateBudget)
	}
	if !strings.Contains(got.Text, "step 2 of 2") {
		t.Errorf("the DM does not say its step: %q", got.Text)
	}
	// Nothing is dropped: every DM of the flood arrives, a second apart.
	var last time.Time
	waitFor(t, s.Ctx, "every step-2 DM of the flood", func() bool {
		for i := range fairFlood {
			m, ok := dmTo(fmt.Sprintf("queue lag f%03d", i))
			if !ok {
				return false
			}
			if m.At.After(last) {
				last = m.At
			}
		}
		return true
	})
	t.Logf("fair escalation: the flood's last step-2 DM came %v after the first flood alert's step 2 was due", last.Sub(floodDue).Round(time.Millisecond))
}
