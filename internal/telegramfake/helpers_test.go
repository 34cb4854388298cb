package telegramfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "123456:test-token"

// epoch is the manual clock's starting time; its Unix value is 1700000000.
var epoch = time.Unix(1_700_000_000, 0)

// manualClock is a clock that moves only when a test says so.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *manualClock { return &manualClock{t: epoch} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newFake returns an unstarted server on a manual clock; zero fields of cfg
// take the test token (unless cfg names bots in Tokens) and the clock.
func newFake(t *testing.T, cfg Config) (*Server, *manualClock) {
	t.Helper()
	clock := newClock()
	if cfg.Token == "" && len(cfg.Tokens) == 0 {
		cfg.Token = testToken
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	s := New(cfg)
	t.Cleanup(func() { _ = s.Close() })
	return s, clock
}

// startFake is newFake for a listening server on the real clock.
func startFake(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Token == "" && len(cfg.Tokens) == 0 {
		cfg.Token = testToken
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// reply is an answer captured from the handler.
type reply struct {
	code        int
	body        string
	contentType string
}

// serve runs one request through h in-process.
func serve(h http.Handler, r *http.Request) reply {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return reply{code: rec.Code, body: rec.Body.String(), contentType: rec.Header().Get("Content-Type")}
}

// send posts form as sendMessage with the test token.
func send(h http.Handler, form url.Values) reply {
	return call(h, testToken, "sendMessage", form)
}

// call posts form to method with token.
func call(h http.Handler, token, method string, form url.Values) reply {
	r := httptest.NewRequest(http.MethodPost, "/bot"+token+"/"+method, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return serve(h, r)
}

// text is a sendMessage form for chat with text.
func text(chat, txt string) url.Values { return url.Values{"chat_id": {chat}, "text": {txt}} }

// decoded is the envelope of an answer, for tests that look at fields.
type decoded struct {
	OK          bool            `json:"ok"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Result      json.RawMessage `json:"result"`
	Parameters  struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

func decode(t *testing.T, r reply) decoded {
	t.Helper()
	var d decoded
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", r.code, err, r.body)
	}
	return d
}

// mustAccept fails the test unless r is a 200 answer.
func mustAccept(t *testing.T, r reply) {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("want 200, got %d: %s", r.code, r.body)
	}
}

// mustRetryAfter fails the test unless r is a 429 and returns retry_after.
func mustRetryAfter(t *testing.T, r reply) int {
	t.Helper()
	if r.code != http.StatusTooManyRequests {
		t.Fatalf("want 429, got %d: %s", r.code, r.body)
	}
	d := decode(t, r)
	if d.Parameters.RetryAfter < 1 {
		t.Fatalf("429 without a positive retry_after: %s", r.body)
	}
	return d.Parameters.RetryAfter
}

// postHTTP sends a form over the network to a started server.
func postHTTP(ctx context.Context, s *Server, method string, form url.Values) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/bot"+testToken+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}
