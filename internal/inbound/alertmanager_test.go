package inbound_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/alertmanagertest"
)

// amConfig points Alertmanager's Slack, Discord, PagerDuty and Opsgenie
// receivers at Herald, every alert its own group, resolutions sent.
const amConfig = `route:
  receiver: slack
  group_by: ['...']
  group_wait: 100ms
  group_interval: 1s
  repeat_interval: 1h
  routes:
    - {receiver: slack, continue: true}
    - {receiver: discord, continue: true}
    - {receiver: pagerduty, continue: true}
    - {receiver: opsgenie, continue: true}
receivers:
  - name: slack
    slack_configs:
      - api_url: '{{BASE}}/v1/inbound/slack/{{TOKEN}}'
        channel: '#ops'
        send_resolved: true
        text: '*{{ .CommonLabels.alertname }}* on _{{ .CommonLabels.instance }}_ <!here> <https://runbook.example/disk|runbook>'
  - name: discord
    discord_configs:
      - webhook_url: '{{BASE}}/v1/inbound/discord/api/webhooks/1001/{{TOKEN}}'
        send_resolved: true
        message: '**{{ .CommonLabels.alertname }}** on ` + "`" + `{{ .CommonLabels.instance }}` + "`" + `'
  - name: pagerduty
    pagerduty_configs:
      - routing_key: '{{TOKEN}}'
        url: '{{BASE}}/v1/inbound/pagerduty/v2/enqueue'
        send_resolved: true
  - name: opsgenie
    opsgenie_configs:
      - api_key: '{{TOKEN}}'
        api_url: '{{BASE}}/v1/inbound/opsgenie/'
        send_resolved: true
`

// pushAlerts posts alerts to Alertmanager's API v2, ended when resolved.
func pushAlerts(t *testing.T, am *alertmanagertest.Alertmanager, resolved bool, names ...string) {
	t.Helper()
	now := time.Now().UTC()
	var list []map[string]any
	for _, n := range names {
		a := map[string]any{
			"labels":       map[string]string{"alertname": n, "instance": "db-1", "severity": "critical"},
			"annotations":  map[string]string{"summary": n + " on db-1", "description": "free space below 3%"},
			"startsAt":     now.Add(-time.Minute).Format(time.RFC3339),
			"generatorURL": "http://prometheus.example/graph",
		}
		if resolved {
			a["endsAt"] = now.Format(time.RFC3339)
		}
		list = append(list, a)
	}
	am.PostAlerts(t, list)
}

// TestAlertmanagerReceivers runs Debian's Alertmanager with its Slack,
// Discord, PagerDuty and Opsgenie receivers pointed at Herald: two alerts
// fire and resolve, and each arrives once per receiver, readable, with
// PagerDuty's and Opsgenie's resolutions replying in their firing
// message's thread.
func TestAlertmanagerReceivers(t *testing.T) {
	alertmanagertest.Binary(t) // skip before the stack starts when it is missing
	s := startStack(t)
	cfg := strings.NewReplacer("{{BASE}}", s.Fleet.APIBase, "{{TOKEN}}", s.Fleet.APIToken).Replace(amConfig)
	am := alertmanagertest.Start(t, cfg, 0)
	names := []string{"DiskFull", "DiskSlow"}
	receivers := []string{"slack", "discord", "pagerduty", "opsgenie"}

	pushAlerts(t, am, false, names...)
	waitPerChat(t, s.Ctx, s.Fake, receivers, len(names))
	pushAlerts(t, am, true, names...)
	waitPerChat(t, s.Ctx, s.Fake, receivers, 2*len(names))

	for _, r := range receivers {
		ms := inChat(s.Fake, chats[r])
		if len(ms) != 2*len(names) {
			t.Fatalf("%s: %d messages, want %d", r, len(ms), 2*len(names))
		}
		if r == "slack" || r == "discord" {
			// The receivers' own text, mrkdwn and Markdown, rendered.
			for _, want := range []string{"DiskFull on db-1", "DiskSlow on db-1"} {
				if c := countHolding(t, ms, want); c != 2 {
					t.Errorf("%s: %d messages hold %q, want 2", r, c, want)
				}
			}
		}
		for _, n := range names {
			if c := countHolding(t, ms, n); c != 2 {
				t.Errorf("%s: %d messages name %s, want 2 (firing and resolved)", r, c, n)
			}
		}
		for i, m := range ms {
			assertReadable(t, visible(t, m))
			if i == 0 || i == len(ms)-1 {
				t.Logf("%s, message %d:\n%s", r, i+1, visible(t, m))
			}
		}
		if r == "pagerduty" || r == "opsgenie" {
			assertThreaded(t, r, ms)
		}
		for _, m := range ms[:len(names)] {
			// Every sender's firing grade reads as critical: Slack's
			// danger, Discord's red, PagerDuty's error, the severity
			// label among Opsgenie's details.
			if text := visible(t, m); !strings.HasPrefix(text, "🚨") {
				t.Errorf("%s: a firing message is not marked critical: %s", r, text)
			}
		}
	}
	if st := s.Fake.Stats(); st.TooMany != 0 {
		t.Fatalf("%d 429s", st.TooMany)
	}
}

// waitPerChat waits until every receiver's chat holds n messages; a few
// seconds more show that no extra one follows.
func waitPerChat(t *testing.T, ctx context.Context, fake *telegramfake.Server, receivers []string, n int) {
	t.Helper()
	err := fake.WaitUntil(ctx, func() bool {
		for _, r := range receivers {
			if len(inChat(fake, chats[r])) < n {
				return false
			}
		}
		return true
	})
	if err != nil {
		for _, r := range receivers {
			t.Logf("%s: %d messages", r, len(inChat(fake, chats[r])))
		}
		t.Fatalf("waiting for %d messages per receiver: %v", n, err)
	}
}

// countHolding counts the messages whose visible text names an alert.
func countHolding(t *testing.T, ms []telegramfake.Message, name string) int {
	n := 0
	for _, m := range ms {
		if strings.Contains(visible(t, m), name) {
			n++
		}
	}
	return n
}

// assertThreaded checks that the second half of a chat's messages (the
// resolutions) each reply to one of the first half (the firing ones), each
// to a different one.
func assertThreaded(t *testing.T, r string, ms []telegramfake.Message) {
	t.Helper()
	firing := map[int]bool{}
	for _, m := range ms[:len(ms)/2] {
		firing[m.MessageID] = true
	}
	seen := map[int]bool{}
	for _, m := range ms[len(ms)/2:] {
		if m.ReplyTo == nil || !firing[m.ReplyTo.MessageID] || seen[m.ReplyTo.MessageID] {
			t.Errorf("%s: resolution %d is not a reply to its own firing message (reply_to %+v): %s", r, m.MessageID, m.ReplyTo, visible(t, m))
			continue
		}
		seen[m.ReplyTo.MessageID] = true
	}
}
