package app

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// TestTelegramWebhookRoute: with HERALD_TELEGRAM_WEBHOOK_SECRET the
// producer takes Telegram's posts at /telegram/<bot>/updates, without the
// API token but with the secret token; without the setting there is no
// such route.
func TestTelegramWebhookRoute(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	post := func(h http.Handler, path, secret string) int {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(
			`{"update_id": 7, "callback_query": {"id": "q1", "from": {"id": 5, "first_name": "Eve"}, "data": "h1:ack:00"}}`))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set(interact.SecretHeader, secret)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, secret := range []string{"", "tg_secret"} {
		cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Bots: []string{"default", "pages"}, Keyring: httpapi.KeyringConfig{APIToken: "t"}, Telegram: interact.ReceiverSettings{WebhookSecret: interact.WebhookSecret{Secret: secret}}}.WithDefaults()
		h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		if secret == "" {
			if got := post(h, "/telegram/pages/updates", "x"); got != http.StatusNotFound {
				t.Errorf("without the setting: %d, want 404", got)
			}
			continue
		}
		if got := post(h, "/telegram/pages/updates", "wrong"); got != http.StatusUnauthorized {
			t.Errorf("wrong secret: %d, want 401", got)
		}
		if got := post(h, "/telegram/pages/updates", secret); got != http.StatusOK {
			t.Errorf("right secret: %d, want 200", got)
		}
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: srv.Addr})
	defer insp.Close()
	ts, err := insp.ListPendingTasks("critical")
	if err != nil || len(ts) != 1 || ts[0].Type != interact.TypeUpdate {
		t.Fatalf("pending critical tasks %v (%v), want the update", ts, err)
	}
}
