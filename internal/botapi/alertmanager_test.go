package botapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/alertmanagertest"
)

// alertmanagerConfig is a receiver whose telegram_configs point at the
// front: api_url and bot_token (a Herald credential) are all that differ
// from a configuration for Telegram itself.
const alertmanagerConfig = `
route:
  receiver: herald
  group_by: [alertname]
  group_wait: 100ms
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: herald
    telegram_configs:
      - api_url: %s/telegram
        bot_token: %s
        chat_id: 42
        send_resolved: true
`

// alertmanager is a running Alertmanager on a loopback port.
type alertmanager struct {
	*alertmanagertest.Alertmanager
	url string
}

func startAlertmanager(t *testing.T, heraldURL string) *alertmanager {
	t.Helper()
	am := alertmanagertest.Start(t, fmt.Sprintf(alertmanagerConfig, heraldURL, sendToken), 0)
	return &alertmanager{Alertmanager: am, url: am.URL}
}

// post sends alerts to Alertmanager's API v2.
func (am *alertmanager) post(t *testing.T, alerts []map[string]any) { am.PostAlerts(t, alerts) }

// metric sums the samples of Alertmanager's metric name whose labels
// include every one of labels ("integration=\"telegram\"").
func (am *alertmanager) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(am.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// countText counts the fake's messages whose text holds every one of subs.
func countText(ms []telegramfake.Message, subs ...string) int {
	n := 0
	for _, m := range ms {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(m.Text, s)
		}
		if all {
			n++
		}
	}
	return n
}

// TestAlertmanagerTelegramReceiver: the real Alertmanager's telegram
// receiver, pointed at the front, delivers a firing alert and its
// resolution once each, and counts both notifications as successful.
func TestAlertmanagerTelegramReceiver(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	am := startAlertmanager(t, s.url)
	start := time.Now().Add(-time.Minute).UTC()
	alert := map[string]any{
		"labels":      map[string]string{"alertname": "DiskFull", "instance": "db-1", "severity": "critical"},
		"annotations": map[string]string{"summary": "disk <90%> full & growing"},
		"startsAt":    start.Format(time.RFC3339),
	}
	am.post(t, []map[string]any{alert})
	s.waitFor(t, 1)
	alert["endsAt"] = time.Now().UTC().Format(time.RFC3339)
	am.post(t, []map[string]any{alert})
	ms := s.waitFor(t, 2)
	// Both notifications are counted by Alertmanager once it has the
	// answers; then no third message may come.
	waitMetric(t, s.ctx, am, 2)
	ms = s.fake.Messages()
	if n := countText(ms, "DiskFull", "db-1"); n != 2 || len(ms) != 2 {
		t.Fatalf("the fake got %d messages (%d about DiskFull), want 2: %+v", len(ms), n, ms)
	}
	if ms[0].ChatID != 42 || ms[0].ParseMode != "HTML" || !strings.Contains(ms[0].Text, "&lt;90%&gt;") {
		t.Errorf("firing message: %+v", ms[0])
	}
	if !strings.Contains(ms[0].Text, "Alerts Firing") || !strings.Contains(ms[1].Text, "Alerts Resolved") {
		t.Errorf("want the firing message, then the resolved one: %q, %q", ms[0].Text, ms[1].Text)
	}
	if failed := am.metric(t, "alertmanager_notifications_failed_total", `integration="telegram"`); failed != 0 {
		t.Errorf("alertmanager counts %v failed telegram notifications, want 0", failed)
	}
}

// waitMetric waits until Alertmanager counts n telegram notifications.
func waitMetric(t *testing.T, ctx context.Context, am *alertmanager, n float64) {
	t.Helper()
	for {
		got := am.metric(t, "alertmanager_notifications_total", `integration="telegram"`)
		if got == n {
			return
		}
		if got > n {
			t.Fatalf("alertmanager counts %v telegram notifications, want %v", got, n)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("alertmanager counts %v telegram notifications at the deadline, want %v", got, n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
