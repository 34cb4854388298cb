package telegramfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// hookCall is one request a test webhook received.
type hookCall struct {
	secret, contentType string
	updateID            int
	queryID             string
}

// testHook is a webhook that records what it receives and answers with the
// status codes of answer in turn (200 once they run out).
type testHook struct {
	*httptest.Server
	mu     sync.Mutex
	calls  []hookCall
	answer []int
}

func newTestHook(t *testing.T, answer ...int) *testHook {
	t.Helper()
	h := &testHook{answer: answer}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var u struct {
			UpdateID      int `json:"update_id"`
			CallbackQuery struct {
				ID string `json:"id"`
			} `json:"callback_query"`
		}
		_ = json.Unmarshal(body, &u)
		h.mu.Lock()
		h.calls = append(h.calls, hookCall{r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), r.Header.Get("Content-Type"), u.UpdateID, u.CallbackQuery.ID})
		code := http.StatusOK
		if len(h.answer) > 0 {
			code, h.answer = h.answer[0], h.answer[1:]
		}
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *testHook) received() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// hookIDs lists the update ids of calls.
func hookIDs(calls []hookCall) []int {
	var out []int
	for _, c := range calls {
		out = append(out, c.updateID)
	}
	return out
}

// fastHooks is a Config whose webhooks retry within milliseconds.
func fastHooks() Config {
	cfg := open()
	cfg.WebhookRetry = time.Millisecond
	return cfg
}

func TestWebhookDelivers(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fastHooks())
	hook := newTestHook(t)
	r := call(s, testToken, "setWebhook", url.Values{"url": {hook.URL + "/tg"}, "secret_token": {"s3cr-et_"}, "allowed_updates": {`["callback_query"]`}})
	mustAccept(t, r)
	if !strings.Contains(r.body, `"description":"Webhook was set"`) {
		t.Errorf("setWebhook answered %s", r.body)
	}
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	q, err := s.Press("", 42, id, alice, "ack")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the delivery", func() bool { st, _ := s.Updates(""); return st.Delivered == 1 })
	calls := hook.received()
	if len(calls) != 1 || calls[0] != (hookCall{"s3cr-et_", "application/json", q.UpdateID, q.ID}) {
		t.Errorf("webhook received %+v", calls)
	}
	if qs := s.CallbackQueries(""); qs[0].Deliveries != 1 {
		t.Errorf("deliveries %d", qs[0].Deliveries)
	}

	r = call(s, testToken, "getWebhookInfo", nil)
	var info webhookInfoJSON
	if err := json.Unmarshal(decode(t, r).Result, &info); err != nil {
		t.Fatal(err)
	}
	if info.URL != hook.URL+"/tg" || info.PendingUpdateCount != 0 || info.MaxConnections != 40 || info.IPAddress != "127.0.0.1" ||
		!slices.Equal(info.AllowedUpdates, []string{"callback_query"}) || info.LastErrorMessage != "" {
		t.Errorf("webhook info %+v", info)
	}
	if st, _ := s.Updates(""); st.SecretToken != "s3cr-et_" || st.Webhook != hook.URL+"/tg" || st.WebhookSetAt.IsZero() {
		t.Errorf("update state %+v", st)
	}
}

// A webhook that fails gets the update again, and the updates after it
// wait their turn.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fastHooks())
	hook := newTestHook(t, 500, 502)
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	q1, _ := s.Press("", 42, id, alice, "ack") // pending while there is no webhook
	q2, _ := s.Press("", 42, id, alice, "ack")
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	waitFor(t, s, "both deliveries", func() bool { st, _ := s.Updates(""); return st.Delivered == 2 })
	if got := hookIDs(hook.received()); !slices.Equal(got, []int{q1.UpdateID, q1.UpdateID, q1.UpdateID, q2.UpdateID}) {
		t.Errorf("webhook received %v", got)
	}
	st, _ := s.Updates("")
	if st.Failed != 2 || st.Pending != 0 || st.LastError != "Wrong response from the webhook: 502 Bad Gateway" || !st.LastErrorAt.Equal(epoch) {
		t.Errorf("state %+v", st)
	}
	r := call(s, testToken, "getWebhookInfo", nil)
	if !containsAll(r.body, `"last_error_date":1700000000`, `"last_error_message":"Wrong response from the webhook: 502 Bad Gateway"`) {
		t.Errorf("webhook info %s", r.body)
	}
}

func TestWebhookBackoff(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{WebhookRetry: time.Second})
	d := &delivery{}
	var got []time.Duration
	for range 10 {
		got = append(got, s.backoff(d, 0))
	}
	want := []time.Duration{0, 2, 4, 8, 16, 32, 60, 60, 60, 60}
	for i := range want {
		want[i] *= time.Second
	}
	if !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
	if next := s.backoff(d, 5); next != 5*time.Second {
		t.Errorf("Retry-After 5: %v", next)
	}
}

func TestWebhookRedeliver(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, fastHooks())
	hook := newTestHook(t)
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	q, _ := s.Press("", 42, id, alice, "ack")
	if err := s.Redeliver("", q.UpdateID, 5); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "six deliveries", func() bool { return s.CallbackQueries("")[0].Deliveries == 6 })
	calls := hook.received()
	if len(calls) != 6 {
		t.Fatalf("%d posts", len(calls))
	}
	for _, c := range calls {
		if c.updateID != q.UpdateID || c.queryID != q.ID {
			t.Errorf("post %+v, want update %d query %s", c, q.UpdateID, q.ID)
		}
	}
}

// An update the webhook keeps refusing is dropped when it expires.
func TestWebhookDropsExpiredUpdates(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{WebhookRetry: time.Hour})
	hook := newTestHook(t, 500, 500)
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	_, _ = s.Press("", 42, id, alice, "ack")
	// The first failure is retried at once, the second in two hours:
	// after the update's 150 seconds, so it is dropped.
	waitFor(t, s, "the drop", func() bool { st, _ := s.Updates(""); return st.Failed == 2 && st.Pending == 0 })
	clock.Advance(time.Hour)
	if st, _ := s.Updates(""); st.Delivered != 0 || len(hook.received()) != 2 {
		t.Errorf("state %+v, posts %d", st, len(hook.received()))
	}
}

func TestSetWebhookAnswers(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, open())
	set := func(kv ...string) reply { return call(s, testToken, "setWebhook", with(url.Values{}, kv...)) }
	desc := func(r reply) string {
		t.Helper()
		mustAccept(t, r)
		var d struct{ Description string }
		_ = json.Unmarshal([]byte(r.body), &d)
		return d.Description
	}
	const u = "https://herald.example/telegram"
	if got := desc(set("url", u)); got != "Webhook was set" {
		t.Errorf("set: %q", got)
	}
	// Another within a second is refused, even unchanged.
	if retry := mustRetryAfter(t, set("url", u)); retry != 1 {
		t.Errorf("retry_after %d", retry)
	}
	clock.Advance(time.Second)
	if got := desc(set("url", u)); got != "Webhook is already set" {
		t.Errorf("unchanged: %q", got)
	}
	clock.Advance(time.Second)
	if got := desc(set("url", u, "secret_token", "abc")); got != "Webhook was set" {
		t.Errorf("new secret: %q", got)
	}
	if got := desc(call(s, testToken, "deleteWebhook", nil)); got != "Webhook was deleted" {
		t.Errorf("delete: %q", got)
	}
	if got := desc(call(s, testToken, "deleteWebhook", nil)); got != "Webhook is already deleted" {
		t.Errorf("delete again: %q", got)
	}
	if got := desc(set("url", "")); got != "Webhook is already deleted" {
		t.Errorf("empty url: %q", got)
	}
	if st := s.Stats(); st.TooManySetWebhook != 1 || st.TooMany != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestSetWebhookErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		form []string
		desc string
	}{
		{"not http", []string{"url", "ftp://herald.example/x"}, "invalid webhook URL specified"},
		{"no host", []string{"url", "https:///x"}, "invalid webhook URL specified"},
		{"secret too long", []string{"url", "https://h.example/", "secret_token", strings.Repeat("a", 257)}, "secret token is too long"},
		{"secret characters", []string{"url", "https://h.example/", "secret_token", "a b"}, "secret token contains unallowed characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, clock := newFake(t, open())
			mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {"https://old.example/"}}))
			clock.Advance(time.Second)
			refused(t, call(s, testToken, "setWebhook", with(url.Values{}, tc.form...)), http.StatusBadRequest, "Bad Request: "+tc.desc)
			// The old webhook was closed before the new one was checked.
			if st, _ := s.Updates(""); st.Webhook != "" {
				t.Errorf("webhook left %q", st.Webhook)
			}
		})
	}
}

func TestSetWebhookDropPendingUpdates(t *testing.T) {
	t.Parallel()
	for _, drop := range []bool{false, true} {
		s, _ := newFake(t, fastHooks())
		hook := newTestHook(t)
		pressN(t, s, 2)
		form := url.Values{"url": {hook.URL}}
		if drop {
			form.Set("drop_pending_updates", "true")
		}
		mustAccept(t, call(s, testToken, "setWebhook", form))
		if drop {
			if st, _ := s.Updates(""); st.Pending != 0 {
				t.Errorf("dropped: %d pending", st.Pending)
			}
			continue
		}
		waitFor(t, s, "the pending updates", func() bool { st, _ := s.Updates(""); return st.Delivered == 2 })
	}
}

// Close ends a webhook delivery under way.
func TestCloseEndsWebhookDelivery(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	arrived := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leave
		close(arrived)
		<-r.Context().Done()
	}))
	defer hook.Close()
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	pressN(t, s, 1)
	<-arrived
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the webhook")
	}
}

// Close leaves no goroutine behind: not the webhook loop, not its
// connections, not a long poll. Not parallel, so that goleak sees only
// this test's goroutines.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hook := newTestHook(t)
	s, err := Start(Config{Token: testToken, WebhookRetry: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	pressN(t, s, 1)
	waitFor(t, s, "the delivery", func() bool { st, _ := s.Updates(""); return st.Delivered == 1 })
	mustAccept(t, call(s, testToken, "deleteWebhook", nil))
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	poll := make(chan error, 1)
	go func() {
		resp, err := client.PostForm(s.URL()+"/bot"+testToken+"/getUpdates", url.Values{"timeout": {"50"}})
		if err == nil {
			_ = resp.Body.Close()
		}
		poll <- err
	}()
	waitFor(t, s, "the long poll", func() bool { st, _ := s.Updates(""); return st.LongPolling })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-poll; err == nil {
		t.Error("the long poll was answered, not dropped, at Close")
	}
	hook.Close()
}
