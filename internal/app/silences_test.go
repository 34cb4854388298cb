package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/test/redistest"
)

// TestSilencesRoutes: the producer serves the silences API behind the API
// token, and the alerts API answers which silence caught an alert.
func TestSilencesRoutes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg := config.Producer{Redis: config.Redis{URL: srv.URL()}, APIToken: "t", AlertsDefaultChat: "42"}.WithDefaults()
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
	const silence = `{"matchers": [{"name": "source", "value": "backup"}], "duration": "1h", "created_by": "ops"}`
	for _, c := range []struct{ method, target, body string }{
		{http.MethodPost, "/v1/silences", silence}, {http.MethodGet, "/v1/silences", ""}, {http.MethodDelete, "/v1/silences/x", ""},
	} {
		if w := call(c.method, c.target, "", c.body); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d %s", c.method, c.target, w.Code, w.Body)
		}
	}
	w := call(http.MethodPost, "/v1/silences", "t", silence)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var sil struct{ ID string }
	if err := json.Unmarshal(w.Body.Bytes(), &sil); err != nil || sil.ID == "" {
		t.Fatalf("create answered %s (%v)", w.Body, err)
	}
	if w := call(http.MethodPost, "/v1/silences", "t", `{"matchers": [], "duration": "1h", "created_by": "ops"}`); w.Code != http.StatusBadRequest ||
		!strings.Contains(w.Body.String(), `"field":"matchers"`) {
		t.Errorf("bad silence: %d %s", w.Code, w.Body)
	}
	w = call(http.MethodPost, "/v1/alerts", "t", `{"title": "backup failed", "source": "backup", "severity": "warning"}`)
	if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"silenced_by":"`+sil.ID+`"`) ||
		!strings.Contains(w.Body.String(), `"messages":[]`) {
		t.Fatalf("silenced alert: %d %s", w.Code, w.Body)
	}
	w = call(http.MethodGet, "/v1/silences/"+sil.ID+"/alerts", "t", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"title":"backup failed"`) {
		t.Fatalf("caught alerts: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodPost, "/v1/alerts", "t", `{"title": "disk full", "source": "cron"}`); w.Code != http.StatusAccepted ||
		strings.Contains(w.Body.String(), "silenced") {
		t.Fatalf("other alert: %d %s", w.Code, w.Body)
	}
}
