package telegramfake

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTokenAndRouting(t *testing.T) {
	t.Parallel()
	const unauthorized = `{"ok":false,"error_code":401,"description":"Unauthorized"}`
	const notFound = `{"ok":false,"error_code":404,"description":"Not Found"}`
	tests := []struct {
		name, path string
		code       int
		body       string
	}{
		{"wrong token getMe", "/bot999:nope/getMe", 401, unauthorized},
		{"wrong token sendMessage", "/bot999:nope/sendMessage?chat_id=42&text=x", 401, unauthorized},
		{"empty token", "/bot/getMe", 404, notFound},
		{"unknown method", "/bot" + testToken + "/sendPigeon", 404, notFound},
		{"no method", "/bot" + testToken + "/", 404, notFound},
		{"not a bot path", "/file/bot" + testToken + "/x", 404, notFound},
		{"method case ignored", "/bot" + testToken + "/SENDMESSAGE?chat_id=42&text=x", 200, ""},
		{"getMe lower case", "/bot" + testToken + "/getme", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			got := serve(s, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if got.code != tc.code || (tc.body != "" && got.body != tc.body) {
				t.Errorf("got %d %s, want %d %s", got.code, got.body, tc.code, tc.body)
			}
			if tc.code != 200 {
				if st := s.Stats(); st.Rejected != 1 || st.Requests != 1 {
					t.Errorf("stats %+v", st)
				}
			}
		})
	}
}

func TestDefaultToken(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	defer s.Close()
	mustAccept(t, call(s, DefaultToken, "getMe", nil))
	if got := call(s, testToken, "getMe", nil); got.code != http.StatusUnauthorized {
		t.Errorf("got %d, want 401", got.code)
	}
}

func TestClosedServerRefuses(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got := send(s, text("42", "x")); got.code != http.StatusBadGateway {
		t.Errorf("after Close got %d, want 502", got.code)
	}
}

func TestSeveralTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   Config
		token string
		code  int
		bot   string // the bot the request is counted for; "" for none
	}{
		{"first of two", twoBots(), tokenAlerts, 200, "alerts"},
		{"second of two", twoBots(), tokenPages, 200, "pages"},
		{"unknown token", twoBots(), "200000003:nope", 401, ""},
		{"known id, other secret", twoBots(), "200000001:nope", 401, ""},
		{"DefaultToken not served beside Tokens", twoBots(), DefaultToken, 401, ""},
		{"Token beside Tokens", Config{Token: testToken, Tokens: map[string]string{"pages": tokenPages}}, testToken, 200, DefaultBot},
		{"Tokens beside Token", Config{Token: testToken, Tokens: map[string]string{"pages": tokenPages}}, tokenPages, 200, "pages"},
		{"one token's prefix", twoBots(), tokenAlerts[:len(tokenAlerts)-1], 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, tc.cfg)
			got := call(s, tc.token, "getMe", nil)
			if got.code != tc.code || (tc.code == 401 && got.body != `{"ok":false,"error_code":401,"description":"Unauthorized"}`) {
				t.Fatalf("got %d %s, want %d", got.code, got.body, tc.code)
			}
			st := s.Stats()
			if st.Requests != 1 {
				t.Errorf("totals %+v", st)
			}
			for name, bs := range st.Bots {
				want := int64(0)
				if name == tc.bot {
					want = 1
				}
				if bs.Requests != want {
					t.Errorf("bot %s counted %d requests, want %d", name, bs.Requests, want)
				}
			}
		})
	}
}

// TestTokensNeverShown drives a fake serving several bots through
// successes, refusals, faults and bad control calls, and looks for any of
// its tokens in everything the fake shows: answers, logs, records, counters
// and control errors.
func TestTokensNeverShown(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	var logMu sync.Mutex
	cfg := twoBots()
	cfg.Token = testToken
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, _ := newFake(t, cfg)
	h := s.Handler()
	tokens := []string{testToken, tokenAlerts, tokenPages}

	var shown []string
	keep := func(r reply) { shown = append(shown, r.body) }
	for _, token := range tokens {
		keep(call(h, token, "getMe", nil))
		keep(call(h, token, "sendMessage", text("42", "x")))
		keep(call(h, token, "sendMessage", text("42", "too soon")))
		keep(call(h, token, "getChat", url.Values{"chat_id": {"nobody"}}))
		keep(call(h, token, "sendPigeon", nil))
	}
	keep(call(h, "200000001:wrong-secret-CCC", "getMe", nil))
	s.FailNext(1, FaultServerError, "pages")
	s.FailNext(1, FaultBadGateway)
	keep(call(h, tokenPages, "sendMessage", text("43", "x")))
	keep(call(h, tokenAlerts, "sendMessage", text("43", "x")))
	s.Force429(time.Minute, tokenAlerts) // a token is no selector: refused and logged
	s.SetOutage(true, tokenPages)
	for _, q := range []string{
		"/fake/force429?retry_after=1s&bot=" + url.QueryEscape(tokenAlerts),
		"/fake/outage?on=true&bot=" + url.QueryEscape(tokenPages),
		"/fake/fail?n=1&fault=hang&bot=" + url.QueryEscape(testToken),
	} {
		r := serve(h, newPost(q))
		if r.code != http.StatusBadRequest {
			t.Errorf("POST %s: %d, want 400", q, r.code)
		}
		keep(r)
	}
	r := serve(h, newGet("/fake/messages?bot="+url.QueryEscape(tokenPages)))
	if r.code != http.StatusBadRequest {
		t.Errorf("messages by token: %d, want 400", r.code)
	}
	keep(r)
	if ms := s.MessagesOf(tokenPages); ms != nil {
		t.Errorf("MessagesOf a token: %+v", ms)
	}
	for _, path := range []string{"/fake/stats", "/fake/messages", "/fake/bots"} {
		keep(serve(h, newGet(path)))
	}
	for _, v := range []any{s.Stats(), s.Messages(), s.Bots()} {
		b, _ := json.Marshal(v)
		shown = append(shown, string(b))
	}
	logMu.Lock()
	shown = append(shown, logs.String())
	logMu.Unlock()

	if st := s.Stats(); st.Accepted != 3 || st.Bots["pages"].ServerErrors != 1 || st.Bots["alerts"].ServerErrors != 1 {
		t.Errorf("the requests did not go as planned: %+v", st)
	}
	if !strings.Contains(shown[len(shown)-1], "token-like value (withheld)") {
		t.Errorf("the refused selector was not logged:\n%s", shown[len(shown)-1])
	}
	for _, token := range append(tokens, "200000001:wrong-secret-CCC") {
		_, secret, _ := strings.Cut(token, ":")
		for _, text := range shown {
			if strings.Contains(text, secret) {
				t.Errorf("token %q shown in:\n%s", secret, text)
			}
		}
	}
}

// lockedWriter serialises writes to a builder shared with the test.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
