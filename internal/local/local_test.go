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

// The one-command local mode really delivers: API -> in-memory Redis ->
// worker -> fake Telegram, with no redis-server installed.
func TestLocalModeDeliversAMessage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan local.Endpoints, 1)
	var banner strings.Builder
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
	resp, err := http.Post(ep.API+"/v1/messages", "application/json",
		strings.NewReader(`{"chat":"42","text":"hello <b>local</b>","parse_mode":"HTML"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST answered %s", resp.Status)
	}
	fake := telegramfake.Remote{URL: ep.FakeTelegram}
	for {
		ms, err := fake.Messages(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 {
			if ms[0].Text != "hello <b>local</b>" || ms[0].ChatID != 42 {
				t.Fatalf("delivered %+v", ms[0])
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("message not delivered in time")
		}
		time.Sleep(20 * time.Millisecond) // the fake is in another goroutine's server; polling its API is the interface
	}
	if !strings.Contains(banner.String(), "NOTHING IS PERSISTED") {
		t.Errorf("banner does not warn that nothing is persisted:\n%s", banner.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}
