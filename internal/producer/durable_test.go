package producer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/test/redistest"
)

// durableAPI is the API on a real master with one replica, waiting for it.
type durableAPI struct {
	h       http.Handler
	replica *redistest.Server
	rdb     *redis.Client
}

func newDurableAPI(t *testing.T) *durableAPI {
	t.Helper()
	master, replica := redistest.StartReplicated(t)
	rdb := master.Client(t)
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{
		Durable: durable.New(rdb, durable.Config{Auto: true, Timeout: 200 * time.Millisecond}),
	})
	// A mounted endpoint that writes to Herald's slot and answers 201, as
	// the heartbeats do.
	hb := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("read\n"))
			return
		}
		if err := rdb.HSet(r.Context(), "{herald}:hb:beats", "x", "1").Err(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Handler", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	api, err := producer.NewAPI(producer.Config{
		Enqueuer: enq, Redis: rdb, Keyring: testKeyring(t, testToken, ""), Logger: slog.New(slog.DiscardHandler),
		Mounts: []httpapi.Mount{{Pattern: "/v1/heartbeats/", Handler: hb}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &durableAPI{h: api.Handler(), replica: replica, rdb: rdb}
}

func (d *durableAPI) do(method, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	return rec
}

// TestAcknowledgementWaitsForTheReplica: with the replica paused, a new
// message, the duplicate answer for a known key and a mounted endpoint's
// 2xx all become 503 with Retry-After; once the replica is back the same
// requests are acknowledged, the repeated key as a duplicate.
func TestAcknowledgementWaitsForTheReplica(t *testing.T) {
	t.Parallel()
	d := newDurableAPI(t)
	const msg = `{"chat":"42","text":"hello"}`
	if rec := d.do("POST", "/v1/messages", msg, "Idempotency-Key", "k1"); rec.Code != http.StatusAccepted {
		t.Fatalf("replica in sync: %d %s", rec.Code, rec.Body)
	}
	if err := d.replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.replica.Resume() }()

	check503 := func(what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		var body httpapi.ErrorBody
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" ||
			!strings.Contains(body.Error.Message, "not yet confirmed by its replicas") {
			t.Errorf("%s with the replica paused: %d %q Retry-After=%q, want 503 naming the replicas",
				what, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
		if rec.Header().Get("X-Handler") != "" || rec.Header().Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: the 503 carries the handler's headers: %v", what, rec.Header())
		}
	}
	check503("new message", d.do("POST", "/v1/messages", `{"chat":"42","text":"second"}`, "Idempotency-Key", "k2"))
	check503("duplicate of k1", d.do("POST", "/v1/messages", msg, "Idempotency-Key", "k1"))
	check503("heartbeat ping", d.do("POST", "/v1/heartbeats/x", `{}`))
	if rec := d.do("GET", "/v1/heartbeats/x", ""); rec.Code != http.StatusOK || rec.Body.String() != "read\n" {
		t.Errorf("a read waits for nothing: %d %q", rec.Code, rec.Body)
	}

	if err := d.replica.Resume(); err != nil {
		t.Fatal(err)
	}
	if rec := d.do("POST", "/v1/messages", `{"chat":"42","text":"second"}`, "Idempotency-Key", "k2"); rec.Code != http.StatusAccepted ||
		rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry of k2 after the replica is back: %d %q, want 202 as a duplicate (the first try was stored on the master)", rec.Code, rec.Body)
	}
	rec := d.do("POST", "/v1/heartbeats/x", `{}`)
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"ok":true}` || rec.Header().Get("X-Handler") != "yes" {
		t.Errorf("heartbeat ping after the replica is back: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
}

// TestReadyzNamesAReplica: /readyz fails on a replica with the configured
// check's message.
func TestReadyzNamesAReplica(t *testing.T) {
	t.Parallel()
	d := newDurableAPI(t)
	replicaClient := d.replica.Client(t)
	api, err := producer.NewAPI(producer.Config{
		Enqueuer: jobs.NewEnqueuer(replicaClient, jobs.EnqueueConfig{}), Redis: replicaClient, Keyring: testKeyring(t, testToken, ""),
		Logger: slog.New(slog.DiscardHandler),
		Ready:  func(ctx context.Context) error { return durable.CheckPrimary(ctx, replicaClient) },
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "is a read-only replica, not a master") {
		t.Errorf("/readyz on a replica: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	d.h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/readyz on the master: %d %s", rec.Code, rec.Body)
	}
}
