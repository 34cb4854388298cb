package app

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// TestAlertThreadsWired: the producer's router keeps alerts' threads in
// its Redis, so a firing alert's thread is marked open (pending until a
// worker sends it).
func TestAlertThreadsWired(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: "t"}, Routes: alerts.RoutesConfig{DefaultChat: "42"}}.WithDefaults()
	h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	req := httptest.NewRequest(http.MethodPost, "/v1/alerts", strings.NewReader(`{"title": "disk full", "key": "disk/db-1"}`))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusAccepted {
		t.Fatalf("alert: %d %s", w.Code, w.Body)
	}
	if v, err := rdb.Get(context.Background(), keys.Bot("").Thread("42", "alert/by/api/disk/db-1/default")).Result(); err != nil || v != "pending" {
		t.Fatalf("thread record = %q (%v), want pending", v, err)
	}
}
