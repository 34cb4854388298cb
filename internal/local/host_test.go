package local_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// hostRequest sends method path with body (JSON, if any) to base's address,
// with host as the Host header, and returns the status and the body.
func hostRequest(t *testing.T, method, base, path, host, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestLocalModeRefusesForeignHosts: DNS rebinding. A page on evil.example
// whose name now resolves to 127.0.0.1 reaches the local mode's ports with
// Host: evil.example; the API, the web UI and the fake Bot API answer it
// 421 misdirected_host and send nothing, while the loopback names pass.
func TestLocalModeRefusesForeignHosts(t *testing.T) {
	m := startLocal(t)
	for _, base := range []string{m.ep.API, m.ep.FakeTelegram} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		port := u.Port()
		for host, want := range map[string]int{
			"evil.example": 421, "evil.example:" + port: 421, "127.0.0.1:" + port: 200, "localhost:" + port: 200,
			"[::1]:" + port: 200, "localhost": 200,
		} {
			path := "/livez"
			if base == m.ep.FakeTelegram {
				path = "/fake/messages"
			}
			code, body := hostRequest(t, http.MethodGet, base, path, host, "")
			if code != want {
				t.Errorf("GET %s%s with Host %q: %d, want %d (%s)", base, path, host, code, want, body)
			}
		}
	}

	// What the attacking page would do: send a message, open the web UI.
	for _, path := range []string{"/v1/messages", "/monitoring/"} {
		method, body := http.MethodPost, `{"chat":"42","text":"from evil.example"}`
		if path == "/monitoring/" {
			method, body = http.MethodGet, ""
		}
		code, got := hostRequest(t, method, m.ep.API, path, "evil.example", body)
		var e httpapi.ErrorBody
		if err := json.Unmarshal([]byte(got), &e); err != nil || code != http.StatusMisdirectedRequest || e.Error.Code != httpapi.CodeMisdirectedHost {
			t.Fatalf("%s %s with Host evil.example: %d %s, want 421 %s", method, path, code, got, httpapi.CodeMisdirectedHost)
		}
		if want := "open " + m.ep.API + " instead"; !strings.Contains(e.Error.Message, want) {
			t.Errorf("421 message %q lacks %q", e.Error.Message, want)
		}
	}
	code, body := hostRequest(t, http.MethodPost, m.ep.API, "/v1/messages", "localhost", `{"chat":"42","text":"from localhost"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST with Host localhost: %d %s", code, body)
	}
	if got := m.waitOne(t); got.Text != "from localhost" {
		t.Fatalf("delivered %+v, want only the message from localhost", got)
	}
	if ms, err := (telegramfake.Remote{URL: m.ep.FakeTelegram}).Messages(m.ctx, 0); err != nil || len(ms) != 1 {
		t.Errorf("fake holds %d messages (%v), want 1", len(ms), err)
	}
	if err := m.stop(); err != nil {
		t.Fatalf("local.Run: %v", err)
	}
}
