package webui

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/redistest"
)

// screenshotFile is the documentation's picture of the archived-task view,
// relative to this package.
const screenshotFile = "../../docs/img/web-ui-archived.png"

// get sends a GET with an optional Authorization header and returns the
// status, the WWW-Authenticate header and the body.
func get(t *testing.T, url, authorization string) (int, string, string) {
	t.Helper()
	return do(t, http.MethodGet, url, authorization)
}

func do(t *testing.T, method, url, authorization string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
}

func basic(user, password string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

// TestMonitoringRequiresToken checks over plain HTTP that the UI and its API
// answer only a request carrying the API token.
func TestMonitoringRequiresToken(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := &stack{redis: srv, rdb: srv.Client(t), log: testLogger(t)}
	base := s.serveProducer(t, false)

	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"page without credentials", "/monitoring/", "", http.StatusUnauthorized},
		{"API without credentials", "/monitoring/api/queues", "", http.StatusUnauthorized},
		{"deep link without credentials", "/monitoring/queues/default?status=archived", "", http.StatusUnauthorized},
		{"wrong basic password", "/monitoring/", basic("herald", "not-the-token"), http.StatusUnauthorized},
		{"token as basic user name only", "/monitoring/", basic(apiToken, ""), http.StatusUnauthorized},
		{"wrong bearer", "/monitoring/", "Bearer not-the-token", http.StatusUnauthorized},
		{"basic with the token as password", "/monitoring/", basic("anyone", apiToken), http.StatusOK},
		{"bearer token", "/monitoring/", "Bearer " + apiToken, http.StatusOK},
		{"API with bearer token", "/monitoring/api/queues", "Bearer " + apiToken, http.StatusOK},
		{"basic with the admin token", "/monitoring/", basic("admin", adminToken), http.StatusOK},
		{"API with the admin token", "/monitoring/api/queues", "Bearer " + adminToken, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, challenge, body := get(t, base+tt.path, tt.auth)
			if status != tt.want {
				t.Fatalf("GET %s: status %d, want %d; body %q", tt.path, status, tt.want, body)
			}
			if status == http.StatusUnauthorized && !strings.Contains(challenge, "Basic") {
				t.Errorf("401 without a Basic challenge (WWW-Authenticate %q): browsers would not ask for a password", challenge)
			}
			if status == http.StatusOK && tt.path == "/monitoring/" && !strings.Contains(body, "<title>Asynq - Monitoring</title>") {
				t.Errorf("authorised page is not the asynqmon index: %.200q", body)
			}
		})
	}
}

// archivedTask is the part of asynqmon's archived-task JSON the test reads.
type archivedTask struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Payload      string `json:"payload"`
	ErrorMessage string `json:"error_message"`
}

// TestWebUI drives chromium through the web UI of a producer whose Redis
// holds pending tasks in every queue and one task archived by a real worker.
func TestWebUI(t *testing.T) {
	browser := startBrowser(t)
	s := seed(t)
	base := s.serveProducer(t, false)
	roBase := s.serveProducer(t, true)
	archivedPage := "/monitoring/queues/" + s.archived.Queue + "?status=archived"
	t.Logf("archived task %s: %s", s.archived.ID, s.archived.LastErr)

	t.Run("API formats the payload and hides the bot token", func(t *testing.T) {
		status, _, body := get(t, base+"/monitoring/api/queues/"+s.archived.Queue+"/archived_tasks", "Bearer "+adminToken)
		if status != http.StatusOK {
			t.Fatalf("archived_tasks: status %d: %s", status, body)
		}
		mustNotContain(t, "archived_tasks API answer", body, botToken)
		var list struct {
			Tasks []archivedTask `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("decode archived_tasks: %v: %s", err, body)
		}
		if len(list.Tasks) != 1 || list.Tasks[0].ID != s.archived.ID {
			t.Fatalf("archived tasks = %+v, want just %s", list.Tasks, s.archived.ID)
		}
		task := list.Tasks[0]
		if !strings.Contains(task.Payload, "\n  \"chat\": \""+blockedChat+"\"") {
			t.Errorf("payload is not indented JSON:\n%s", task.Payload)
		}
		if !strings.Contains(task.ErrorMessage, "bot was blocked by the user") {
			t.Errorf("error_message %q does not say the bot was blocked", task.ErrorMessage)
		}
	})

	t.Run("browser without the token gets 401", func(t *testing.T) {
		tb := openTab(t, browser, false)
		tb.login("") // the user cancels the login prompt
		if status := tb.navigate(base + "/monitoring/"); status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401\n--- page text ---\n%s", status, tb.text())
		}
		tb.waitText("missing or wrong token")
	})

	t.Run("dashboard lists the queues", func(t *testing.T) {
		tb := openTab(t, browser, true)
		if status := tb.navigate(base + "/monitoring/"); status != http.StatusOK {
			t.Fatalf("status %d, want 200\n--- page text ---\n%s", status, tb.text())
		}
		if title := eval[string](tb, `document.title`); title != "Asynq - Monitoring" {
			t.Errorf("title %q, want %q", title, "Asynq - Monitoring")
		}
		tb.waitText("Queues", "critical", "default", "low")
		rows := eval[[][]string](tb, `Array.from(document.querySelectorAll('table[aria-label="queues overview table"] tbody tr'))
			.map(r => Array.from(r.cells).map(c => c.innerText.trim()))`)
		got := map[string]string{}
		for _, r := range rows {
			if len(r) >= 3 {
				got[r[0]] = r[2] // queue name, size
			}
		}
		want := map[string]string{"critical": "1", "default": "3", "low": "1"}
		for q, size := range want {
			if got[q] != size {
				t.Errorf("queue %s: size %q, want %q (rows %q)\n--- page text ---\n%s", q, got[q], size, rows, tb.text())
			}
		}
		mustNotContain(t, "dashboard text", tb.text(), botToken)
	})

	t.Run("archived task shows its reason", func(t *testing.T) {
		tb := openTab(t, browser, true)
		tb.navigate(base + archivedPage)
		tb.waitText("bot was blocked by the user", blockedText)
		text := tb.text()
		for _, want := range []string{
			s.archived.ID[:8],                   // the UI shows an id prefix
			"\"chat\": \"" + blockedChat + "\"", // indented JSON, not compact
			"Last Error",
			"blocked",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("archived view lacks %q\n--- page text ---\n%s", want, text)
			}
		}
		mustNotContain(t, "archived view text", text, botToken)
		mustNotContain(t, "archived view HTML", tb.html(), botToken)
		headers := eval[[]string](tb, `Array.from(document.querySelectorAll('thead th')).map(th => th.innerText.trim())`)
		if !slices.Contains(headers, "Actions") {
			t.Errorf("read-write view has no Actions column (headers %q)", headers)
		}
		if n := eval[int](tb, `document.querySelectorAll('input[type=checkbox]').length`); n == 0 {
			t.Errorf("read-write view has no selection checkboxes")
		}
		if os.Getenv("HERALD_UPDATE_SCREENSHOT") == "1" {
			png := tb.screenshot()
			if err := os.WriteFile(filepath.FromSlash(screenshotFile), png, 0o644); err != nil {
				t.Fatalf("write screenshot: %v", err)
			}
			t.Logf("wrote %s (%d bytes)", screenshotFile, len(png))
		}
	})

	t.Run("task details show payload and reason", func(t *testing.T) {
		tb := openTab(t, browser, true)
		tb.navigate(base + "/monitoring/queues/" + s.archived.Queue + "/tasks/" + s.archived.ID)
		tb.waitText(s.archived.ID, "bot was blocked by the user", "\"text\": \""+blockedText+"\"")
		mustNotContain(t, "task details text", tb.text(), botToken)
		mustNotContain(t, "task details HTML", tb.html(), botToken)
	})

	t.Run("read-only mode hides every action", func(t *testing.T) {
		tb := openTab(t, browser, true)
		tb.navigate(roBase + archivedPage)
		tb.waitText("bot was blocked by the user", blockedText)
		if !eval[bool](tb, `window.READ_ONLY === true`) {
			t.Errorf("the page did not receive the read-only flag")
		}
		headers := eval[[]string](tb, `Array.from(document.querySelectorAll('thead th')).map(th => th.innerText.trim())`)
		if slices.Contains(headers, "Actions") {
			t.Errorf("read-only view still has an Actions column (headers %q)", headers)
		}
		if n := eval[int](tb, `document.querySelectorAll('input[type=checkbox]').length`); n != 0 {
			t.Errorf("read-only view has %d selection checkboxes, want none", n)
		}
		status, _, body := do(t, http.MethodDelete,
			roBase+"/monitoring/api/queues/"+s.archived.Queue+"/archived_tasks/"+s.archived.ID, "Bearer "+adminToken)
		if status != http.StatusMethodNotAllowed {
			t.Errorf("DELETE by the admin in read-only mode: status %d, want 405: %s", status, body)
		}
		if err := s.archivedStillThere(); err != nil {
			t.Errorf("archived task after a read-only DELETE: %v", err)
		}
	})
}
