package app

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/test/redistest"
)

// TestBadRedisPasswordFailsFast starts the producer and the worker against a
// Redis that refuses their password: each returns at once with an error
// naming REDIS_URL (and not the password), instead of running and logging
// refusals. A Redis that is down is not such an error.
func TestBadRedisPasswordFailsFast(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	if err := srv.Client(t).ConfigSet(t.Context(), "requirepass", "right-password").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	for _, url := range []string{
		"redis://:wrong-password@" + srv.Addr + "/0",
		"redis://" + srv.Addr + "/0",
		"redis://nobody:right-password@" + srv.Addr + "/0",
	} {
		pcfg := settings.Producer{Redis: redisconn.Config{URL: url}, Server: producer.ServerConfig{Listen: "127.0.0.1:0"}, Keyring: httpapi.KeyringConfig{APIToken: "t"}}.WithDefaults()
		err := RunProducer(ctx, pcfg, log)
		if err == nil || !strings.Contains(err.Error(), "REDIS_URL") || strings.Contains(err.Error(), "wrong-password") {
			t.Errorf("RunProducer with %s: %v, want an error naming REDIS_URL without the password", pcfg.Redis.Redacted(), err)
		}
		wcfg := settings.Worker{Redis: redisconn.Config{URL: url}, Telegram: settings.Telegram{Token: "1:x", Client: telegram.Config{APIURL: "http://127.0.0.1:1"}}}.WithDefaults()
		wcfg.Listen = ""
		if err := RunWorker(ctx, wcfg, log); err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
			t.Errorf("RunWorker with %s: %v, want an error naming REDIS_URL", wcfg.Redis.Redacted(), err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the checks did not return before the deadline")
	}

	right := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "right-password"})
	defer right.Close()
	if err := checkRedisAuth(ctx, right, "ok"); err != nil {
		t.Errorf("the right password: %v", err)
	}
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer down.Close()
	if err := checkRedisAuth(ctx, down, "down"); err != nil {
		t.Errorf("a Redis that is down must not fail the start: %v", err)
	}
}
