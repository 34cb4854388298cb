package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// TestMetricsOnTheirOwnListener runs the producer with HERALD_METRICS_LISTEN
// and HERALD_METRICS_TOKEN: /metrics answers on its own port with the
// token only, and the API's port no longer serves it.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ports := make([]string, 2)
	for i := range ports {
		p, err := redistest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Server: producer.ServerConfig{Listen: ports[0], MetricsListen: ports[1], MetricsToken: "scrape"}, Keyring: httpapi.KeyringConfig{APIToken: "api"}}.WithDefaults()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- RunProducer(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunProducer: %v", err)
		}
	})
	get := func(url, token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// A server binding its port sends no signal: poll until it answers.
	deadline := time.Now().Add(20 * time.Second)
	for get("http://"+ports[0]+"/livez", "") != 200 || get("http://"+ports[1]+"/metrics", "scrape") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the producer's listeners did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tc := range []struct {
		url, token string
		want       int
	}{
		{"http://" + ports[1] + "/metrics", "scrape", 200},
		{"http://" + ports[1] + "/metrics", "", 401},
		{"http://" + ports[1] + "/metrics", "api", 401},
		{"http://" + ports[1] + "/v1/messages", "api", 404},
		{"http://" + ports[0] + "/metrics", "scrape", 404},
	} {
		if got := get(tc.url, tc.token); got != tc.want {
			t.Errorf("GET %s with %q: %d, want %d", tc.url, tc.token, got, tc.want)
		}
	}
}
