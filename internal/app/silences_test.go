package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// TestSilencesRoutes: the producer serves the silences API to tokens with
// the operate scope only (a sender's token gets a 403 on every route and
// changes nothing), records who made a silence from the token's name, and
// the alerts API answers which silence caught an alert.
func TestSilencesRoutes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	dir := t.TempDir()
	writeFile(t, dir+"/oncall.token", "oncall-token-0123456789")
	writeFile(t, dir+"/grafana.token", "grafana-token-0123456789")
	writeFile(t, dir+"/tokens.yaml", "tokens:\n"+
		"  - {name: oncall, scopes: [send, operate], file: oncall.token}\n"+
		"  - {name: grafana, scopes: send, file: grafana.token}\n")
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: "t", TokensFile: dir + "/tokens.yaml"}, Routes: alerts.RoutesConfig{DefaultChat: "42"}}.WithDefaults()
	h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	call := func(method, target, token, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	const silence = `{"matchers": [{"name": "source", "value": "backup"}], "duration": "1h"}`
	const operate = "oncall-token-0123456789"
	routes := []struct{ method, target, body string }{
		{http.MethodPost, "/v1/silences", silence}, {http.MethodGet, "/v1/silences", ""}, {http.MethodDelete, "/v1/silences/x", ""},
		{http.MethodGet, "/v1/silences/x", ""}, {http.MethodGet, "/v1/silences/x/alerts", ""},
		{http.MethodPost, "/v1/silences", `{"matchers": [{"name": "source", "value": ".+", "is_regex": true}], "duration": "1h", "all": true}`},
	}
	for _, c := range routes {
		if w := call(c.method, c.target, "", c.body); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d %s", c.method, c.target, w.Code, w.Body)
		}
		for _, sender := range []string{"t", "grafana-token-0123456789"} {
			if w := call(c.method, c.target, sender, c.body); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `\"operate\" scope`) {
				t.Errorf("%s %s with a send-scope token: %d %s", c.method, c.target, w.Code, w.Body)
			}
		}
	}
	if n, err := rdb.Exists(t.Context(), keys.Silences()).Result(); err != nil || n != 0 {
		t.Fatalf("the refused requests left a silence behind (exists=%d, %v)", n, err)
	}
	if w := call(http.MethodPost, "/v1/silences", operate, `{"matchers": [{"name": "source", "value": "backup"}], "duration": "1h", "created_by": "@alice (Telegram)"}`); w.Code != http.StatusBadRequest ||
		!strings.Contains(w.Body.String(), `"field":"created_by"`) {
		t.Errorf("a created_by naming someone else: %d %s", w.Code, w.Body)
	}
	w := call(http.MethodPost, "/v1/silences", operate, silence)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"created_by":"oncall"`) {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var sil struct{ ID string }
	if err := json.Unmarshal(w.Body.Bytes(), &sil); err != nil || sil.ID == "" {
		t.Fatalf("create answered %s (%v)", w.Body, err)
	}
	if w := call(http.MethodPost, "/v1/silences", operate, `{"matchers": [], "duration": "1h"}`); w.Code != http.StatusBadRequest ||
		!strings.Contains(w.Body.String(), `"field":"matchers"`) {
		t.Errorf("bad silence: %d %s", w.Code, w.Body)
	}
	w = call(http.MethodPost, "/v1/alerts", "t", `{"title": "backup failed", "source": "backup", "severity": "warning"}`)
	if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"silenced_by":"`+sil.ID+`"`) ||
		!strings.Contains(w.Body.String(), `"messages":[]`) {
		t.Fatalf("silenced alert: %d %s", w.Code, w.Body)
	}
	w = call(http.MethodGet, "/v1/silences/"+sil.ID+"/alerts", operate, "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"title":"backup failed"`) {
		t.Fatalf("caught alerts: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodPost, "/v1/alerts", "t", `{"title": "disk full", "source": "cron"}`); w.Code != http.StatusAccepted ||
		strings.Contains(w.Body.String(), "silenced") {
		t.Fatalf("other alert: %d %s", w.Code, w.Body)
	}
}

// writeFile writes content to path or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
