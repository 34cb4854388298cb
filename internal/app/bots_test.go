package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
)

// Tokens shaped like @BotFather's, for the checks against Telegram's API.
const (
	tokDefault = "111111:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	tokPages   = "222222:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	tokStatus  = "333333:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
)

// loadWorker loads a worker's settings from env or fails the test.
func loadWorker(t *testing.T, env map[string]string) settings.Worker {
	t.Helper()
	cfg, err := settings.LoadWorker(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestNewSendersOnePerBot(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(file, []byte(tokStatus+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := loadWorker(t, map[string]string{
		settings.EnvBots: "default,pages,status", settings.EnvTelegramToken: tokDefault,
		"HERALD_BOT_PAGES_TOKEN": tokPages, "HERALD_BOT_STATUS_TOKEN_FILE": file,
	})
	bots, err := NewSenders(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(bots) != 3 {
		t.Fatalf("%d senders, want 3: %v", len(bots), bots)
	}
	for _, name := range []string{"default", "pages", "status"} {
		if _, ok := bots[name].(*telegram.Client); !ok {
			t.Errorf("bot %q has sender %T, want a *telegram.Client", name, bots[name])
		}
	}
	if err := CheckWorker(cfg); err != nil {
		t.Errorf("CheckWorker: %v", err)
	}

	// The default bot alone is today's worker.
	one, err := NewSenders(loadWorker(t, map[string]string{settings.EnvTelegramToken: tokDefault}))
	if err != nil || len(one) != 1 || one["default"] == nil {
		t.Fatalf("default bot alone: %v, %v", one, err)
	}
}

func TestNewSendersNamesEveryMissingToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"the default bot alone", map[string]string{},
			[]string{"TELEGRAM_BOT_TOKEN (-telegram-bot-token) or TELEGRAM_BOT_TOKEN_FILE is required to run a worker"}},
		{"every bot without a token", map[string]string{settings.EnvBots: "default,pages,status-page", "HERALD_BOT_PAGES_TOKEN": tokPages},
			[]string{
				`TELEGRAM_BOT_TOKEN (-telegram-bot-token) or TELEGRAM_BOT_TOKEN_FILE is required to run a worker: it holds the token of the bot "default" that HERALD_BOTS lists`,
				`HERALD_BOT_STATUS_PAGE_TOKEN or HERALD_BOT_STATUS_PAGE_TOKEN_FILE is required to run a worker: it holds the token of the bot "status-page" that HERALD_BOTS lists`,
			}},
		{"a token Telegram could not take", map[string]string{settings.EnvBots: "pages", "HERALD_BOT_PAGES_TOKEN": "222:secret/token"},
			[]string{`bot "pages" (HERALD_BOT_PAGES_TOKEN): telegram: Config.Token contains the character '/'`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadWorker(t, tc.env)
			_, err := NewSenders(cfg)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n%v\nlacks\n%s", err, want)
				}
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), tokPages) {
				t.Errorf("error holds a token: %v", err)
			}
			if err2 := CheckWorker(cfg); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("CheckWorker: %v, want the same error", err2)
			}
		})
	}
}

func TestCheckWorkerChecksEveryBotsToken(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pages")
	if err := os.WriteFile(file, []byte("222:not-a-real-token-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := loadWorker(t, map[string]string{
		settings.EnvBots: "default,pages,status", settings.EnvTelegramToken: tokDefault,
		"HERALD_BOT_PAGES_TOKEN_FILE": file, "HERALD_BOT_STATUS_TOKEN": "333:short-secret",
	})
	err := CheckWorker(cfg)
	if err == nil {
		t.Fatal("badly shaped tokens accepted")
	}
	for _, want := range []string{
		"HERALD_BOT_PAGES_TOKEN_FILE (" + file + "): the bot token is not shaped like one",
		"HERALD_BOT_STATUS_TOKEN: the bot token is not shaped like one",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\nlacks\n%s", err, want)
		}
	}
	if strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") || strings.Contains(err.Error(), "secret") {
		t.Errorf("error blames the good token or holds a token: %v", err)
	}

	// A fake or self-hosted Bot API takes any token.
	cfg.Telegram.Client.APIURL = "http://127.0.0.1:8081"
	if err := CheckWorker(cfg); err != nil {
		t.Errorf("against another Bot API: %v", err)
	}
}

func TestCheckProducerRefusesEveryBotsToken(t *testing.T) {
	t.Parallel()
	env := map[string]string{httpapi.EnvAuthDisabled: "true", settings.EnvBots: "default,pages"}
	getenv := func(k string) string { return env[k] }
	cfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckProducer(cfg, getenv); err != nil {
		t.Fatalf("no token set: %v", err)
	}
	for _, v := range []string{"HERALD_BOT_PAGES_TOKEN", "HERALD_BOT_PAGES_TOKEN_FILE", settings.EnvTelegramTokenFile} {
		env := map[string]string{httpapi.EnvAuthDisabled: "true", settings.EnvBots: "default,pages", v: "/run/secrets/x"}
		err := CheckProducer(cfg, func(k string) string { return env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), v+" is set in the producer's environment") {
			t.Errorf("%s set: %v", v, err)
		}
	}
}

// TestProducerKnowsItsBots: the enqueuer and the routes of a producer take
// the bots of HERALD_BOTS and no other.
func TestProducerKnowsItsBots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	routes := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(routes, []byte("routes:\n  - name: pager\n    bot: pages\n    destinations: [1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{httpapi.EnvAuthDisabled: "true", settings.EnvBots: "pages,status", alerts.EnvRoutesFile: routes}
	cfg, err := settings.LoadProducer(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRoutes(cfg); err != nil {
		t.Errorf("routes naming a known bot: %v", err)
	}
	other := cfg
	other.Bots = []string{"default", "status"}
	if _, err := LoadRoutes(other); err == nil || !strings.Contains(err.Error(), `route "pager" names the bot "pages"`) ||
		!strings.HasPrefix(err.Error(), alerts.EnvRoutesFile) {
		t.Errorf("routes naming an unknown bot: %v", err)
	}

	// Validation comes before any Redis command: no Redis is needed.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	enq := NewEnqueuer(rdb, cfg)
	defer enq.Close()
	for bot, want := range map[string]string{
		"":        "is required: this Herald has no default bot; its bots are pages, status",
		"default": "is required: this Herald has no default bot; its bots are pages, status",
		"ops":     `"ops" is not a bot of this Herald; its bots are pages, status`,
	} {
		_, err := enq.Enqueue(context.Background(), jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x", Bot: bot}})
		var verr *jobs.ValidationError
		if !errors.As(err, &verr) || !slices.ContainsFunc(verr.Fields, func(f jobs.FieldError) bool {
			return f.Field == "bot" && f.Message == want
		}) {
			t.Errorf("bot %q: %v, want the field bot: %s", bot, err, want)
		}
	}
}
