package inbound_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// chats are where the stack's routing file sends each source's alerts, so
// a test tells by the chat which receiver a message came through.
var chats = map[string]string{
	"slack": "-1001000000101", "discord": "-1001000000102", "pagerduty": "-1001000000103",
	"opsgenie": "-1001000000104", "teams": "-1001000000105", "ntfy": "-1001000000106", "gotify": "-1001000000107",
}

// startStack starts redis-server, the fake Bot API, the producer binary
// (with a routing file sending each source to its own chat) and a worker.
func startStack(t *testing.T) *fleettest.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	var y strings.Builder
	y.WriteString("routes:\n")
	for src, chat := range chats {
		fmt.Fprintf(&y, "  - name: %s\n    match: {source: %s}\n    destinations: [%q]\n", src, src, chat)
	}
	path := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(path, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return fleettest.Start(t, fleettest.Options{Workers: 1, ProducerEnv: []string{"HERALD_ROUTES_FILE=" + path}})
}

// inChat returns the messages the fake holds for a chat, in order.
func inChat(fake *telegramfake.Server, chat string) []telegramfake.Message {
	var out []telegramfake.Message
	for _, m := range fake.Messages() {
		if fmt.Sprint(m.ChatID) == chat {
			out = append(out, m)
		}
	}
	return out
}

// visible is a message's text as a reader sees it (HTML markup removed).
func visible(t *testing.T, m telegramfake.Message) string {
	t.Helper()
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	p, err := markup.Plain(text, markup.Mode(m.ParseMode))
	if err != nil {
		t.Fatalf("message %d in %d is not valid %s: %v\n%s", m.MessageID, m.ChatID, m.ParseMode, err, text)
	}
	return p
}

// assertReadable fails when a message shows raw mrkdwn or Markdown.
func assertReadable(t *testing.T, text string) {
	t.Helper()
	for _, mark := range []string{"**", "__", "~~", "||", "`", "<!", "<@", "<http", "](", "&gt;", "&amp;"} {
		if strings.Contains(text, mark) {
			t.Errorf("raw mark %q in a delivered message:\n%s", mark, text)
		}
	}
}

// postJSON posts body and returns the status and answer.
func postJSON(t *testing.T, url string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
