package app

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// TestChatsRoutes: the producer serves the blocked chats of HERALD_BOTS,
// reading to a sender's token and clearing to the operate scope only, and
// counts an API unblock in herald_chat_unblocks_total.
func TestChatsRoutes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Bots: []string{"default", "pages"},
		Keyring: httpapi.KeyringConfig{APIToken: "send-token-0123456789", AdminToken: "admin-token-0123456789"},
		Routes:  alerts.RoutesConfig{DefaultChat: "42"}}.WithDefaults()
	reg := NewRegistry()
	h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	call := func(method, target, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if _, err := chats.NewStore(rdb).Block(t.Context(), "pages", "42", chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	if w := call(http.MethodGet, "/v1/chats/pages/42", "send-token-0123456789"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"blocked":true`) {
		t.Errorf("GET with a send token: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodDelete, "/v1/chats/pages/42/block", "send-token-0123456789"); w.Code != http.StatusForbidden {
		t.Errorf("DELETE with a send token: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodDelete, "/v1/chats/pages/42/block", "admin-token-0123456789"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"was_blocked":true`) {
		t.Errorf("DELETE with the admin token: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodGet, "/v1/chats/status/42", "send-token-0123456789"); w.Code != http.StatusNotFound {
		t.Errorf("GET of a bot HERALD_BOTS does not list: %d %s", w.Code, w.Body)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "herald_chat_unblocks_total" {
			for _, m := range mf.GetMetric() {
				counted += m.GetCounter().GetValue()
			}
		}
	}
	if counted != 1 {
		t.Errorf("herald_chat_unblocks_total %v after an API unblock, want 1", counted)
	}
}
