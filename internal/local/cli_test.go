package local_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestLocalModeServesTheCLI: the REDIS_URL the banner prints takes a
// message from `producer send`, configured exactly as the README's
// walk-through configures it (REDIS_URL only), and the local worker
// delivers it (issue 14: the local mode hid its Redis).
func TestLocalModeServesTheCLI(t *testing.T) {
	m := startLocal(t)
	ep, banner, ctx := m.ep, m.banner, m.ctx
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
	cfg, rest, err := settings.LoadProducerArgs([]string{"send", "hello", "from", "the", "CLI", "--chat", "42"},
		func(k string) string {
			if k == redisconn.EnvURL {
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
	if got := m.waitOne(t); got.Text != "hello from the CLI" || got.ChatID != 42 {
		t.Fatalf("delivered %+v", got)
	}
	if err := m.stop(); err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}
