package amsilence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/alertmanagertest"
	amstack "github.com/herald-dev/herald/test/alertmanagertest/stack"
	"github.com/herald-dev/herald/test/redistest"
)

const (
	scale    = 10
	apiToken = "alertmanager-webhook-token-0123"
)

// ackRoutes sends every alert to chat 42 with an Acknowledge button that
// also silences the alert in the Alertmanager at %s for 2h.
const ackRoutes = `
routes:
  - name: all
    default: true
    destinations: ["42"]
    buttons: [ack]
    alertmanager:
      url: %s
      silence: 2h
`

// amConfig sends Alertmanager's alerts to Herald's webhook receiver.
const amConfig = `
route:
  receiver: herald
  group_wait: 100ms
  group_interval: 1s
receivers:
  - name: herald
    webhook_configs:
      - url: %s/v1/webhooks/alertmanager
        send_resolved: true
        http_config:
          authorization:
            credentials: %s
`

// TestAcknowledgeSilencesInAlertmanager: the real Alertmanager sends an
// alert to Herald's webhook; pressing Acknowledge under its message in
// Telegram creates a silence of the alert's labels in that Alertmanager,
// which then holds the alert as suppressed, and the message says so.
func TestAcknowledgeSilencesInAlertmanager(t *testing.T) {
	alertmanagertest.Binary(t) // skip early when it is missing
	srv := redistest.Start(t)
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	log := slog.New(slog.DiscardHandler)
	amstack.StartWorker(t, srv.URL(), fake.URL(), scale, log)
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	amURL := "http://127.0.0.1:" + strconv.Itoa(port)
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(routes, fmt.Appendf(nil, ackRoutes, amURL), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: apiToken},
		Routes: alerts.RoutesConfig{File: routes}}.WithDefaults()
	p, err := app.NewProducer(cfg, srv.Client(t), asynq.RedisClientOpt{Addr: srv.Addr}, app.NewRegistry(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	api := httptest.NewServer(p.Handler())
	t.Cleanup(api.Close)
	am := alertmanagertest.Start(t, fmt.Sprintf(amConfig, api.URL, apiToken), port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// An alert of the same route from another source is acknowledged
	// without a silence in Alertmanager.
	req, _ := http.NewRequest(http.MethodPost, api.URL+"/v1/alerts", strings.NewReader(`{"title": "queue slow", "key": "q1", "labels": {"alertname": "QueueSlow"}}`))
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/alerts: %v %v", resp, err)
	}
	if text := pressAck(ctx, t, fake, "queue slow", "Acknowledged by @bob_ops"); strings.Contains(text, "Alertmanager") {
		t.Errorf("an API alert's acknowledgement mentions Alertmanager: %q", text)
	}
	am.PostAlerts(t, `[{"labels": {"alertname": "DiskFull", "instance": "db-1"}, "annotations": {"summary": "disk full"}}]`)
	text := pressAck(ctx, t, fake, "DiskFull", "Silenced in Alertmanager for 2h")
	if !strings.Contains(text, "Acknowledged by @bob_ops") {
		t.Errorf("edited message %q", text)
	}
	checkSilenced(t, amURL)
}

// pressAck waits for the message in chat 42 whose text holds about and
// has buttons, presses its first button as @bob_ops, and waits until its
// text holds want.
func pressAck(ctx context.Context, t *testing.T, fake *telegramfake.Server, about, want string) string {
	t.Helper()
	var msg telegramfake.Message
	if err := fake.WaitUntil(ctx, func() bool {
		for _, m := range fake.Messages() {
			if m.ChatID == 42 && m.ReplyMarkup != nil && strings.Contains(m.Text, about) {
				msg = m
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no message about %s with a button: %v (%+v)", about, err, fake.Messages())
	}
	data := msg.ReplyMarkup.InlineKeyboard[0][0].CallbackData
	if _, err := fake.Press("", 42, msg.MessageID, telegramfake.User{ID: 2001, FirstName: "Bob", Username: "bob_ops"}, data); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := fake.WaitUntil(ctx, func() bool {
		m, _ := fake.Lookup(42, msg.MessageID)
		text = m.Current().Text
		return strings.Contains(text, want)
	}); err != nil {
		t.Fatalf("the message about %s does not say %q: %v: %q", about, want, err, text)
	}
	return text
}

// checkSilenced checks that Alertmanager holds one active silence of the
// alert's labels, made by the presser, and the alert as suppressed by it.
func checkSilenced(t *testing.T, amURL string) {
	t.Helper()
	var sils []struct {
		ID       string `json:"id"`
		Matchers []struct {
			Name, Value string
		} `json:"matchers"`
		CreatedBy string `json:"createdBy"`
		Status    struct{ State string }
	}
	getJSON(t, amURL+"/api/v2/silences", &sils)
	if len(sils) != 1 || sils[0].Status.State != "active" || sils[0].CreatedBy != "@bob_ops (Telegram)" || len(sils[0].Matchers) != 2 ||
		sils[0].Matchers[0].Name != "alertname" || sils[0].Matchers[0].Value != "DiskFull" || sils[0].Matchers[1].Value != "db-1" {
		t.Fatalf("alertmanager's silences: %+v", sils)
	}
	var as []struct {
		Status struct {
			State      string   `json:"state"`
			SilencedBy []string `json:"silencedBy"`
		} `json:"status"`
	}
	getJSON(t, amURL+"/api/v2/alerts", &as)
	if len(as) != 1 || as[0].Status.State != "suppressed" || len(as[0].Status.SilencedBy) != 1 || as[0].Status.SilencedBy[0] != sils[0].ID {
		t.Fatalf("alertmanager's alerts: %+v", as)
	}
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
