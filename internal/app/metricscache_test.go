package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// commandsProcessed reads Redis' total_commands_processed.
func commandsProcessed(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(t.Context(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no total_commands_processed in INFO stats")
	return 0
}

// TestMetricsCacheBoundsRedisCost scrapes /metrics repeatedly and counts
// the Redis commands it costs: without the cache every scrape queries the
// queue statistics again; with it, scrapes within HERALD_METRICS_CACHE
// cost nothing more.
func TestMetricsCacheBoundsRedisCost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	enq := NewEnqueuer(rdb, settings.Producer{}.WithDefaults())
	if _, err := enq.Enqueue(t.Context(), jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	cost := func(cache time.Duration, scrapes int) (first, rest int64) {
		cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: "t"}, Server: producer.ServerConfig{MetricsCache: cache}}.WithDefaults()
		cfg.Server.MetricsCache = cache
		h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		scrape := func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			body, _ := io.ReadAll(w.Body)
			if w.Code != 200 || !strings.Contains(string(body), `asynq_queue_size{queue="default"} 1`) {
				t.Fatalf("/metrics: %d %.300s", w.Code, body)
			}
		}
		c0 := commandsProcessed(t, rdb)
		scrape()
		c1 := commandsProcessed(t, rdb)
		for range scrapes {
			scrape()
		}
		c2 := commandsProcessed(t, rdb)
		// Each reading of the counter is itself one command.
		return c1 - c0 - 1, c2 - c1 - 1
	}
	firstNo, restNo := cost(producer.NoMetricsCache, 10)
	firstCached, restCached := cost(time.Hour, 10)
	t.Logf("Redis commands: without cache %d for the first scrape, %d for 10 more; cached %d, then %d for 10 more",
		firstNo, restNo, firstCached, restCached)
	if firstNo < 5 || restNo < 10*firstNo/2 {
		t.Fatalf("without the cache scrapes cost %d then %d commands: the measurement does not see the queue statistics", firstNo, restNo)
	}
	if restCached != 0 {
		t.Errorf("10 scrapes within the cache's lifetime cost %d Redis commands, want 0", restCached)
	}
}
