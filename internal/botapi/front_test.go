package botapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/telegramfake"
)

// answer is the front's answer as Telegram's clients read it.
type answer struct {
	OK          bool   `json:"ok"`
	ErrorCode   int    `json:"error_code"`
	Description string `json:"description"`
	Result      struct {
		MessageID int    `json:"message_id"`
		Text      string `json:"text"`
		Chat      struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		} `json:"chat"`
	} `json:"result"`
	Herald struct {
		ID    string `json:"id"`
		State string `json:"state"`
	} `json:"herald"`
}

// do sends req and reads the answer.
func do(t *testing.T, req *http.Request) (int, answer) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer %s is not JSON: %v", raw, err)
	}
	return resp.StatusCode, a
}

// TestQueryStringSend: Uptime Kuma sends with GET and a query string, as
// Telegram allows; the legacy Markdown it may use arrives as HTML.
func TestQueryStringSend(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	q := url.Values{"chat_id": {"-1001234"}, "text": {"*Up* [status](https://status.example/x) `200`"},
		"parse_mode": {"Markdown"}, "message_thread_id": {"7"}}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/telegram/bot"+sendToken+"/sendMessage?"+q.Encode(), nil)
	code, a := do(t, req)
	if code != http.StatusOK || !a.OK {
		t.Fatalf("GET sendMessage: %d %+v", code, a)
	}
	m := s.waitFor(t, 1)[0]
	want := `<b>Up</b> <a href="https://status.example/x">status</a> <code>200</code>`
	if m.Text != want || m.ParseMode != "HTML" || m.MessageThreadID != 7 || m.ChatID != -1001234 {
		t.Errorf("the fake got %+v, want text %q in topic 7", m, want)
	}
	if a.Result.Chat.Type != "supergroup" || a.Result.Text != "Up status 200" {
		t.Errorf("result %+v", a.Result)
	}
}

// TestLongTextIsSplitNotRefused: a text over Telegram's 4096 characters
// is taken (Telegram would refuse it) and goes as two messages; the answer
// names the first.
func TestLongTextIsSplitNotRefused(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	body := `{"chat_id": 42, "text": "` + strings.Repeat("word ", 1000) + `"}`
	req, _ := http.NewRequest(http.MethodPost, s.url+"/telegram/bot"+sendToken+"/sendMessage", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	code, a := do(t, req)
	ms := s.waitFor(t, 2)
	if code != http.StatusOK || !a.OK || a.Result.MessageID != ms[0].MessageID || a.Herald.State != "sent" {
		t.Fatalf("answer %d %+v, want ok with message_id %d", code, a, ms[0].MessageID)
	}
}

// TestFailureWithinTheWaitIsTheAnswer: when Telegram refuses the message
// for good before the answer is due, the answer is Telegram's refusal.
func TestFailureWithinTheWaitIsTheAnswer(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	const photo = "https://grafana.example/render/gone.png"
	s.fake.SetPhotoURL(photo, telegramfake.PhotoURL{Unreachable: true})
	form := url.Values{"chat_id": {"42"}, "photo": {photo}, "caption": {"panel"}}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/telegram/bot"+sendToken+"/sendPhoto", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, a := do(t, req)
	if code != http.StatusBadRequest || a.OK || a.ErrorCode != 400 || !strings.Contains(a.Description, "failed to get HTTP URL content") {
		t.Fatalf("answer %d %+v, want Telegram's 400", code, a)
	}
}

// TestFrontRefusals: what the path, the credential or a browser gets
// wrong is refused before anything is read or stored.
func TestFrontRefusals(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	body := `{"chat_id": 42, "text": "x"}`
	cases := []struct {
		name, path, site string
		code             int
		want             string
	}{
		{"unknown bot", "/telegram/pages/bot" + sendToken + "/sendMessage", "", 404, "Not Found: this Herald has no bot pages"},
		{"no method", "/telegram/bot" + sendToken + "/", "", 404, "Not Found"},
		{"unknown method", "/telegram/bot" + sendToken + "/deleteMessage", "", 404, "Not Found"},
		{"wrong credential", "/telegram/bot123:ABC/sendMessage", "", 401, "Unauthorized"},
		{"cross-site page", "/telegram/bot" + sendToken + "/sendMessage", "cross-site", 403, "Forbidden: cross-site request refused"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, s.url+c.path+"?"+url.Values{"chat_id": {"42"}, "text": {"x"}}.Encode(), strings.NewReader(body))
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		code, a := do(t, req)
		if code != c.code || a.OK || a.ErrorCode != c.code || a.Description != c.want {
			t.Errorf("%s: %d %+v, want %d %q", c.name, code, a, c.code, c.want)
		}
	}
	// Nothing was stored: the message sent after them, to the same chat
	// in the same queue, is the first to arrive.
	req, _ := http.NewRequest(http.MethodGet, s.url+"/telegram/bot"+sendToken+"/sendMessage?chat_id=42&text=after", nil)
	if code, a := do(t, req); code != http.StatusOK {
		t.Fatalf("valid send: %d %+v", code, a)
	}
	if ms := s.waitFor(t, 1); ms[0].Text != "after" {
		t.Fatalf("first message is %q, want \"after\"", ms[0].Text)
	}
}
