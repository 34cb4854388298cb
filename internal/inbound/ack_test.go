package inbound_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// ackRoutes send PagerDuty's and Opsgenie's alerts to a chat each with an
// Acknowledge button, escalating to the chat ackStep2 after 4 s unless
// acknowledged.
const ackRoutes = `
escalation_policies:
  - name: page
    steps:
      - {notify: [{chat: "-1001000000301"}], wait: 4s}
      - {notify: [{chat: "-1001000000302"}]}
routes:
  - name: pagerduty
    match: {source: pagerduty}
    escalation: page
    buttons: [ack]
    destinations: ["-1001000000303"]
  - name: opsgenie
    match: {source: opsgenie}
    escalation: page
    buttons: [ack]
    destinations: ["-1001000000304"]
`

// TestAcknowledgeFromSource: an acknowledge event from PagerDuty's and
// Opsgenie's APIs does what a press of the Acknowledge button does: the
// firing message is edited to say the tool acknowledged, and the
// escalation's second step never comes.
func TestAcknowledgeFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	path := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(path, []byte(ackRoutes), 0o600); err != nil {
		t.Fatal(err)
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 1, ProducerEnv: []string{"HERALD_ROUTES_FILE=" + path, "HERALD_ESCALATION_CHECK_INTERVAL=100ms"}})
	base, tok := s.Fleet.APIBase+"/v1/inbound/", s.Fleet.APIToken
	fire := func(path, body string, header map[string]string) {
		t.Helper()
		if code, ans := postJSON(t, base+path, []byte(body), header); code != http.StatusAccepted {
			t.Fatalf("POST %s: %d %s", path, code, ans)
		}
	}
	genie := map[string]string{"Authorization": "GenieKey " + tok}
	fire("pagerduty/v2/enqueue", `{"routing_key":"`+tok+`","event_action":"trigger","dedup_key":"db-1/disk","payload":{"summary":"Disk full","source":"db-1","severity":"critical"}}`, nil)
	fire("opsgenie/v2/alerts", `{"message":"Queue stuck","alias":"mq-1","priority":"P1"}`, genie)
	first := map[string]telegramfake.Message{}
	if err := s.Fake.WaitUntil(s.Ctx, func() bool {
		for _, chat := range []string{"-1001000000303", "-1001000000304"} {
			if ms := inChat(s.Fake, chat); len(ms) > 0 {
				first[chat] = ms[0]
			}
		}
		return len(first) == 2
	}); err != nil {
		t.Fatalf("the firing messages did not arrive: %v", err)
	}
	fire("pagerduty/v2/enqueue", `{"routing_key":"`+tok+`","event_action":"acknowledge","dedup_key":"db-1/disk"}`, nil)
	fire("opsgenie/v2/alerts/mq-1/acknowledge?identifierType=alias", `{"user":"ops","note":"on it"}`, genie)
	for chat, by := range map[string]string{"-1001000000303": "PagerDuty", "-1001000000304": "Opsgenie"} {
		m := first[chat]
		want := "Acknowledged by " + by
		if err := s.Fake.WaitUntil(s.Ctx, func() bool {
			cur, _ := s.Fake.Lookup(m.ChatID, m.MessageID)
			return strings.Contains(cur.Current().Text, want)
		}); err != nil {
			cur, _ := s.Fake.Lookup(m.ChatID, m.MessageID)
			t.Fatalf("%s: the firing message was not edited to say %q: %q", chat, want, cur.Current().Text)
		}
	}
	// Step 2 was due 4 s after firing; a stopped escalation sends nothing.
	time.Sleep(5 * time.Second)
	if ms := inChat(s.Fake, "-1001000000302"); len(ms) > 0 {
		t.Errorf("the escalation went on after the acknowledgement: %d step-2 messages, first %q", len(ms), ms[0].Text)
	}
	// A second acknowledgement is answered 202 and changes nothing: the
	// message keeps one line.
	fire("pagerduty/v2/enqueue", `{"routing_key":"`+tok+`","event_action":"acknowledge","dedup_key":"db-1/disk"}`, nil)
	time.Sleep(time.Second) // an edit it queued would have come by now
	m := first["-1001000000303"]
	cur, _ := s.Fake.Lookup(m.ChatID, m.MessageID)
	edits := s.Fake.Edits(m.ChatID, m.MessageID)
	if n := strings.Count(cur.Current().Text, "Acknowledged by"); n != 1 || len(edits) != 1 {
		t.Errorf("after a second acknowledgement: %d lines, %d edits, want 1 and 1:\n%s", n, len(edits), cur.Current().Text)
		for i, e := range edits {
			t.Logf("edit %d at %s: %q, markup %+v", i, e.At.Format("15:04:05.000"), e.Text, e.ReplyMarkup)
		}
	}
}
