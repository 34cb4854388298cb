package botapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegramfake"
	amstack "github.com/herald-dev/herald/test/alertmanagertest/stack"
	"github.com/herald-dev/herald/test/redistest"
)

// The Herald credentials of the stack: sendToken has the send scope (the
// tokens file's "uptime"), opsToken only operate.
const (
	sendToken = "uptime-kuma-credential-0123456789"
	opsToken  = "ops-credential-without-send-0123"
)

// stack is a producer API on a loopback port, one worker and the fake Bot
// API at ten times Telegram's speed, on a real redis-server.
type stack struct {
	url  string // the producer's base URL
	fake *telegramfake.Server
	ctx  context.Context
}

const scale = 10

func startStack(t *testing.T) *stack {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	log := slog.New(slog.DiscardHandler)
	amstack.StartWorker(t, srv.URL(), fake.URL(), scale, log)
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()},
		Keyring: httpapi.KeyringConfig{TokensFile: tokensFile(t)}}.WithDefaults()
	p, err := app.NewProducer(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, app.NewRegistry(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	api := httptest.NewServer(p.Handler())
	t.Cleanup(api.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &stack{url: api.URL, fake: fake, ctx: ctx}
}

// tokensFile writes the stack's tokens file.
func tokensFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, secret := range map[string]string{"uptime": sendToken, "ops": opsToken} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "tokens.yaml")
	yaml := "tokens:\n  - {name: uptime, scopes: [send], file: uptime}\n  - {name: ops, scopes: [operate], file: ops}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
