package inbound

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// The tokens of the test keyring: one that may send, one that may not.
const (
	sendSecret    = "tools-secret-0123456789"
	operateSecret = "ops-secret-0123456789"
)

var testNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// recorder is a Dispatcher that keeps what it was given, or fails with err.
type recorder struct {
	mu      sync.Mutex
	batches [][]alerts.Alert
	err     error
	acks    []string
}

func (r *recorder) Dispatch(_ context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return alerts.Dispatched{}, r.err
	}
	r.batches = append(r.batches, batch)
	out := alerts.Dispatched{}
	for range batch {
		out.Messages = append(out.Messages, jobs.Result{TaskID: "m1", Queue: "default"})
	}
	return out, nil
}

func (r *recorder) alerts() []alerts.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []alerts.Alert
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

func testHandler(t testing.TB, rec *recorder) http.Handler {
	t.Helper()
	k, err := httpapi.NewKeyring(httpapi.NewToken("tools", sendSecret, httpapi.ScopeSend), httpapi.NewToken("ops", operateSecret, httpapi.ScopeOperate))
	if err != nil {
		t.Fatal(err)
	}
	return newHandler(Config{Dispatcher: rec, Keyring: k, Logger: slog.New(slog.DiscardHandler), Clock: func() time.Time { return testNow },
		Acknowledge: func(_ context.Context, source, key string) error {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.acks = append(rec.acks, source+" "+key)
			return nil
		}})
}

// post is one request to the handler.
type post struct {
	method, path, body string
	header             map[string]string
}

func (p post) do(h http.Handler) *httptest.ResponseRecorder {
	m := p.method
	if m == "" {
		m = http.MethodPost
	}
	r := httptest.NewRequest(m, p.path, strings.NewReader(p.body))
	if strings.HasPrefix(strings.TrimSpace(p.body), "{") {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range p.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
