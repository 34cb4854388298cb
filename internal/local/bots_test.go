package local_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// With HERALD_BOTS listing several bots, the fake Bot API serves each with
// a token of its own and the worker sends every message as its bot.
func TestLocalModeServesSeveralBots(t *testing.T) {
	m := startLocalWith(t, func(o *local.Options) { o.Bots = []string{"default", "pages"} })
	for _, body := range []string{`{"chat":"42","text":"as pages","bot":"pages"}`, `{"chat":"43","text":"as default"}`} {
		resp, err := http.Post(m.ep.API+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s answered %s", body, resp.Status)
		}
	}
	resp, err := http.Post(m.ep.API+"/v1/messages", "application/json", strings.NewReader(`{"chat":"42","text":"x","bot":"status"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bot the local mode does not serve: %s, want 400", resp.Status)
	}

	fake := telegramfake.Remote{URL: m.ep.FakeTelegram}
	var got map[string]string // text → bot
	for got == nil || len(got) < 2 {
		ms, err := fake.Messages(m.ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]string{}
		for _, msg := range ms {
			got[msg.Text] = msg.Bot
		}
		if m.ctx.Err() != nil {
			t.Fatalf("delivered %v, want both messages", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got["as pages"] != "pages" || got["as default"] != telegramfake.DefaultBot {
		t.Errorf("delivered as %v, want pages and default", got)
	}
	for _, want := range []string{"Bots:     default, pages", "HERALD_BOTS=default,pages TELEGRAM_BOT_TOKEN=" + telegramfake.DefaultToken + " HERALD_BOT_PAGES_TOKEN="} {
		if !strings.Contains(m.banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, m.banner.String())
		}
	}
	if err := m.stop(); err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}

func TestLocalModeBotErrors(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name string
		o    local.Options
		want string
	}{
		{"a bad name", local.Options{Bots: []string{"Pages"}}, `HERALD_BOTS (-bots) has "Pages", which is not a bot name`},
		{"no default bot for the demo route", local.Options{Bots: []string{"pages"}}, `every alert goes to the demo chat as the bot "default", which HERALD_BOTS (pages) leaves out`},
		{"a real token for one bot only", local.Options{Bots: []string{"default", "pages"}, TelegramToken: "111:real"},
			"with a real bot token every bot needs one: set HERALD_BOT_PAGES_TOKEN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.o
			o.Listen, o.RedisListen, o.Logger = "127.0.0.1:0", "127.0.0.1:0", quiet
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := local.Run(ctx, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "111:real") {
				t.Errorf("error holds the token: %v", err)
			}
		})
	}
}
