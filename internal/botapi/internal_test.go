package botapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/test/redistest"
)

func TestParsePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path string
		want call
		ok   bool
	}{
		{"/telegram/botSECRET/sendMessage", call{token: "SECRET", method: "sendmessage"}, true},
		{"/telegram/pages/botSECRET/SENDPHOTO", call{bot: "pages", token: "SECRET", method: "sendphoto"}, true},
		{"/telegram/bots/botSECRET/getMe", call{bot: "bots", token: "SECRET", method: "getme"}, true},
		{"/telegram/bot/sendMessage", call{}, false},
		{"/telegram/SECRET/sendMessage", call{}, false},
		{"/telegram/Bad Name/botS/getMe", call{}, false},
		{"/telegram/a/b/botS/getMe", call{}, false},
		{"/telegram/botS/", call{}, false},
	}
	for _, c := range cases {
		got, ok := parsePath(c.path)
		if ok != c.ok || got != c.want {
			t.Errorf("parsePath(%q) = %+v %v, want %+v %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

func TestMaskedPath(t *testing.T) {
	t.Parallel()
	cases := []struct{ path, token, want string }{
		{"/telegram/botS3CRET/sendMessage", "S3CRET", "/telegram/bot***/sendMessage"},
		{"/telegram/bots/botS3CRET/getMe", "S3CRET", "/telegram/bots/bot***/getMe"},
		{"/telegram/x/y/botS3CRET/getMe", "", "/telegram/x/y/bot***/getMe"},
	}
	for _, c := range cases {
		if got := maskedPath(c.path, c.token); got != c.want {
			t.Errorf("maskedPath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestWaitSlots(t *testing.T) {
	t.Parallel()
	s := newWaitSlots(8) // 2 per token
	if !s.take("a") || !s.take("a") || s.take("a") {
		t.Fatal("token a: want 2 slots, then none")
	}
	for _, tok := range []string{"b", "b", "c", "c", "d", "d"} {
		if !s.take(tok) {
			t.Fatalf("token %s refused below both bounds", tok)
		}
	}
	if s.take("e") {
		t.Fatal("a ninth slot was given")
	}
	s.release("a")
	if !s.take("e") || s.take("a") {
		t.Fatal("a released slot goes to the next taker; a stays at its bound")
	}
	if one := newWaitSlots(2); !one.take("x") || one.take("x") || !one.take("y") {
		t.Fatal("with 2 slots, each token gets 1")
	}
}

func TestLegacyMarkdown(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want, err string }{
		{"*bold* _it_ `c<d` plain", "<b>bold</b> <i>it</i> <code>c&lt;d</code> plain", ""},
		{"[docs](https://x.example/?a=1&b=2) [bare]", `<a href="https://x.example/?a=1&amp;b=2">docs</a> bare`, ""},
		{"```go\nx := 1```", `<pre><code class="language-go">x := 1</code></pre>`, ""},
		{`snake\_case 2\*2`, "snake_case 2*2", ""},
		{"a <b> & c", "a &lt;b&gt; &amp; c", ""},
		{"an *open entity", "", "can't parse entities: Can't find end of the entity starting at byte offset 3"},
	}
	for _, c := range cases {
		got, err := legacyMarkdown(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("legacyMarkdown(%q) error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("legacyMarkdown(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestParamsReadAsTelegramReadsThem: a JSON body's scalars as strings or
// JSON values, and reply_markup as an object or as JSON text.
func TestParamsReadAsTelegramReadsThem(t *testing.T) {
	t.Parallel()
	bodies := []string{
		`{"chat_id": -100777, "text": "x", "disable_notification": true, "protect_content": 1,
		  "link_preview_options": {"is_disabled": true}, "reply_markup": {"inline_keyboard": [[{"text": "ack", "callback_data": "a"}]]}}`,
		`{"chat_id": "-100777", "text": "x", "disable_notification": "true", "protect_content": "1",
		  "link_preview_options": "{\"is_disabled\":true}", "reply_markup": "{\"inline_keyboard\":[[{\"text\":\"ack\",\"callback_data\":\"a\"}]]}"}`,
	}
	for _, b := range bodies {
		r := httptest.NewRequest(http.MethodPost, "/telegram/botX/sendMessage", strings.NewReader(b))
		p, rf := readParams(httptest.NewRecorder(), r, 1<<20)
		if rf != nil {
			t.Fatalf("%s: %v", b, rf)
		}
		msg, rf := buildMessage(method{}, p)
		if rf != nil {
			t.Fatalf("%s: %v", b, rf)
		}
		if msg.Chat != "-100777" || !msg.DisableNotification || !msg.ProtectContent || !msg.DisableLinkPreview ||
			len(msg.Buttons.Rows()) != 1 || msg.Buttons.Rows()[0][0] != (jobs.Button{Text: "ack", Data: "a"}) {
			t.Errorf("%s: read as %+v", b, msg)
		}
	}
}

func TestRefusedKeyboards(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"keyboard": [[{"text": "yes"}]]}`:                                                          "Bad Request: reply_markup: Herald carries inline_keyboard only",
		`{"inline_keyboard": [[{"text": "pay", "pay": true}]]}`:                                      "Bad Request: can't parse inline keyboard button: Herald carries url and callback_data buttons, not pay",
		`{"inline_keyboard": [[{"text": "x"}]]}`:                                                     "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
		`{"inline_keyboard": [[{"text": "x", "callback_data": "` + strings.Repeat("d", 65) + `"}]]}`: "Bad Request: BUTTON_DATA_INVALID",
		`not json`: "Bad Request: can't parse reply keyboard markup JSON object",
	}
	for raw, want := range cases {
		if _, rf := keyboard(raw); rf == nil || rf.Description != want {
			t.Errorf("keyboard(%s) = %v, want %q", raw, rf, want)
		}
	}
}

// TestPlaceholderWhenNotSentInTime: with no worker, the answer carries
// message_id 0 and Herald's message id, which the ledger knows.
func TestPlaceholderWhenNotSentInTime(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	k, err := httpapi.NewKeyring(httpapi.NewToken("kuma", "kuma-secret-0123456789", httpapi.ScopeSend))
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(Config{Enqueuer: jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), Keyring: k,
		Ledger: ledger.NewStore(rdb, ledger.Config{}), ResultWait: 50 * time.Millisecond})
	r := httptest.NewRequest(http.MethodPost, "/telegram/botkuma-secret-0123456789/sendMessage", strings.NewReader(`{"chat_id": 5, "text": "hi"}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `"message_id":0,`) || !strings.Contains(body, `"state":"queued"`) {
		t.Fatalf("answer %d %s", w.Code, body)
	}
	if strings.Contains(r.URL.Path, "kuma-secret") || r.URL.Path != "/telegram/bot***/sendMessage" {
		t.Errorf("the request's path is %q after the front: the credential must be masked", r.URL.Path)
	}
	id := w.Header().Get("Herald-Message-Id")
	if n, err := rdb.Exists(context.Background(), "asynq:{default}:t:"+id).Result(); err != nil || n != 1 {
		t.Fatalf("task %q stored: %d %v", id, n, err)
	}
}
