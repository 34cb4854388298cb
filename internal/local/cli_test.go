package local_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestLocalModeServesTheCLI: the REDIS_URL the banner prints takes a
// message from `producer send`, configured exactly as the README's
// walk-through configures it (REDIS_URL only), and the local worker
// delivers it (issue 14: the local mode hid its Redis).
func TestLocalModeServesTheCLI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan local.Endpoints, 1)
	var banner bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- local.Run(ctx, local.Options{
			Listen: "127.0.0.1:0", RedisListen: "127.0.0.1:0", Out: &banner,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready:  func(e local.Endpoints) { ready <- e },
		})
	}()
	var ep local.Endpoints
	select {
	case ep = <-ready:
	case err := <-done:
		t.Fatalf("local.Run returned early: %v", err)
	}
	for _, want := range []string{
		"REDIS_URL=" + ep.Redis,
		"REDIS_URL=" + ep.Redis + ` go run ./cmd/producer send --chat 42 "hello from the CLI"`,
		"REDIS_URL=" + ep.Redis + " TELEGRAM_API_URL=" + ep.FakeTelegram + " TELEGRAM_BOT_TOKEN=" + telegramfake.DefaultToken,
		"Ctrl-C",
	} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}

	// What cmd/producer does for `send`, from the environment alone.
	cfg, rest, err := config.LoadProducerArgs([]string{"send", "hello", "from", "the", "CLI", "--chat", "42"},
		func(k string) string {
			if k == config.EnvRedisURL {
				return ep.Redis
			}
			return ""
		})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cfg.Redis.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	var out, errOut bytes.Buffer
	if code := producer.Send(ctx, app.NewEnqueuer(rdb, cfg), rest[1:], strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("producer send exited %d: %s", code, errOut.String())
	}
	fake := telegramfake.Remote{URL: ep.FakeTelegram}
	for {
		ms, err := fake.Messages(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 {
			if ms[0].Text != "hello from the CLI" || ms[0].ChatID != 42 {
				t.Fatalf("delivered %+v", ms[0])
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("message not delivered in time")
		}
		time.Sleep(20 * time.Millisecond) // the fake's API is the interface; it has no push
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}
