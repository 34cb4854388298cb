package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/heartbeat"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// TestHeartbeatSignalRoutes: the heartbeat API's /start and /fail routes
// are served by the producer behind the API token, next to the ping; only a
// token with the operate scope deletes a heartbeat (which ends its alerts).
func TestHeartbeatSignalRoutes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: "t", AdminToken: "admin-t"}}.WithDefaults()
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
			req.Header.Set("Content-Type", "text/plain")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := call(http.MethodPut, "/v1/heartbeats/backup/start?schedule=@daily&time_zone=Europe/Berlin", "", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("/start without the token: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodPut, "/v1/heartbeats/backup/start?schedule=@daily&time_zone=Europe/Berlin", "t", ""); w.Code != http.StatusCreated {
		t.Fatalf("/start: %d %s", w.Code, w.Body)
	}
	// The failure is recorded whether or not a route takes its alert.
	w := call(http.MethodPost, "/v1/heartbeats/backup/fail", "t", "disk full")
	if w.Code != http.StatusOK {
		t.Fatalf("/fail: %d %s", w.Code, w.Body)
	}
	var hb heartbeat.Heartbeat
	if err := json.Unmarshal(w.Body.Bytes(), &hb); err != nil {
		t.Fatal(err)
	}
	if hb.State != "down" || hb.DownReason != "fail" || hb.Schedule != "@daily" || hb.TimeZone != "Europe/Berlin" {
		t.Errorf("/fail answered %+v", hb)
	}
	if w := call(http.MethodDelete, "/v1/heartbeats/backup", "t", ""); w.Code != http.StatusForbidden {
		t.Errorf("DELETE with the sender's token: %d %s, want 403", w.Code, w.Body)
	}
	if w := call(http.MethodGet, "/v1/heartbeats/backup", "t", ""); w.Code != http.StatusOK {
		t.Fatalf("the heartbeat after a refused DELETE: %d %s", w.Code, w.Body)
	}
	if w := call(http.MethodDelete, "/v1/heartbeats/backup", "admin-t", ""); w.Code/100 != 2 {
		t.Errorf("DELETE with the admin token: %d %s", w.Code, w.Body)
	}
}
