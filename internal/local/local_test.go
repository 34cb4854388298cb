package local_test

import (
	"net/http"
	"strings"
	"testing"
)

// The one-command local mode really delivers: API -> in-memory Redis ->
// worker -> fake Telegram, with no redis-server installed.
func TestLocalModeDeliversAMessage(t *testing.T) {
	m := startLocal(t)
	resp, err := http.Post(m.ep.API+"/v1/messages", "application/json",
		strings.NewReader(`{"chat":"42","text":"hello <b>local</b>","parse_mode":"HTML"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST answered %s", resp.Status)
	}
	if got := m.waitOne(t); got.Text != "hello <b>local</b>" || got.ChatID != 42 {
		t.Fatalf("delivered %+v", got)
	}
	if !strings.Contains(m.banner.String(), "NOTHING IS PERSISTED") {
		t.Errorf("banner does not warn that nothing is persisted:\n%s", m.banner.String())
	}
	if err := m.stop(); err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}
