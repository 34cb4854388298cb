package botapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/botapi"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/test/redistest"
)

// BenchmarkFrontSendMessage measures a sendMessage through the front end
// to end against a real redis-server over loopback, answered without
// waiting for the send: read, check, enqueue, answer. It is
// producer.BenchmarkPostMessage's counterpart, for comparison.
func BenchmarkFrontSendMessage(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	k, err := httpapi.NewKeyring(httpapi.NewToken("bench", "bench-secret-0123456789", httpapi.ScopeSend))
	if err != nil {
		b.Fatal(err)
	}
	api, err := producer.NewAPI(producer.Config{Enqueuer: enq, Redis: rdb, Keyring: k,
		Mounts: botapi.Mounts(botapi.Config{Enqueuer: enq, Keyring: k, ResultWait: -1})})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()
	body := `{"chat_id":42,"text":"disk full on db-1"}`
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/telegram/botbench-secret-0123456789/sendMessage", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %s", resp.Status)
		}
	}
}
