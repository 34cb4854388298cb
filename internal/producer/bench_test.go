package producer_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/test/redistest"
)

// BenchmarkPostMessage measures POST /v1/messages end to end against a real
// redis-server over loopback: decode, validate, enqueue, publish, answer.
func BenchmarkPostMessage(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	api, err := producer.NewAPI(producer.Config{Enqueuer: enq, Redis: rdb, Keyring: httpapi.OpenKeyring()})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()
	body := `{"chat":"42","text":"disk full on db-1"}`
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		// Read the answer whole, so the client keeps its connection and the
		// profile shows the producer's work, not a TCP handshake per POST.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("status %s", resp.Status)
		}
	}
}
