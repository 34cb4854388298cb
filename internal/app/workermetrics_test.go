package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/herald-dev/herald/internal/settings"
)

// TestWorkerMetricsToken: with HERALD_WORKER_METRICS_TOKEN set, the
// worker's /metrics answers 401 without the bearer token and with a wrong
// one, and the metrics with it; /livez stays open to probes. Unset, it
// asks for nothing.
func TestWorkerMetricsToken(t *testing.T) {
	get := func(h http.Handler, path, auth string) int {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	reg := NewRegistry()
	m, err := workerMetricsHandler(settings.Worker{MetricsToken: "metrics-secret"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m)
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "Bearer wrong", http.StatusUnauthorized},
		{"/metrics", "Bearer metrics-secret", http.StatusOK},
		{"/livez", "", http.StatusOK},
	} {
		if got := get(mux, c.path, c.auth); got != c.want {
			t.Errorf("GET %s with %q: %d, want %d", c.path, c.auth, got, c.want)
		}
	}
	open, err := workerMetricsHandler(settings.Worker{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(open, "/metrics", ""); got != http.StatusOK {
		t.Errorf("no token set: GET /metrics %d, want 200", got)
	}
	if _, err := workerMetricsHandler(settings.Worker{MetricsToken: "a", MetricsTokenFile: "/nonexistent"}, reg); err == nil {
		t.Error("both the token and its file set: accepted")
	}
}
