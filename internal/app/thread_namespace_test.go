package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// The two tokens of threadStack's producer: HERALD_API_TOKEN (named "api")
// and HERALD_ADMIN_TOKEN (named "admin"), both allowed to send.
const (
	tokenA = "token-a-for-thread-tests"
	tokenB = "token-b-for-thread-tests"
)

// threadChat is the chat of threadStack's default alert route.
const threadChat = "42"

// threadStack is a producer (its HTTP handler, with alerts routed to
// threadChat) and a worker sending to a fake Telegram, on one Redis.
type threadStack struct {
	h    http.Handler
	rdb  *redis.Client
	fake *telegramfake.Server
	ctx  context.Context
}

func newThreadStack(t *testing.T) *threadStack {
	t.Helper()
	const scale = 10
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	client, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fake.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Config{
		Redis:  &redis.UniversalOptions{Addrs: []string{srv.Addr}},
		Sender: client,
		Limits: ratelimit.Config{
			Bot:     ratelimit.Per(30, time.Second/scale),
			Private: ratelimit.Per(1, time.Second/scale),
			Group:   ratelimit.Per(1, time.Second/scale).And(ratelimit.Per(20, time.Minute/scale)),
		},
		BackoffBase:     100 * time.Millisecond,
		BackoffCap:      time.Second,
		ShutdownTimeout: 5 * time.Second,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker.Run: %v", err)
		}
	})
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: tokenA, AdminToken: tokenB}, Routes: alerts.RoutesConfig{DefaultChat: threadChat}}.WithDefaults()
	h, cleanup, err := ProducerHandler(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &threadStack{h: h, rdb: rdb, fake: fake, ctx: ctx}
}

// post sends body to path with token and wants a 202.
func (s *threadStack) post(t *testing.T, token, path, body string) {
	t.Helper()
	s.postWant(t, token, path, body, http.StatusAccepted)
}

// postWant sends body to path with token and wants the status code want.
func (s *threadStack) postWant(t *testing.T, token, path, body string, want int) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	if w.Code != want {
		t.Fatalf("POST %s %s: %d %s, want %d", path, body, w.Code, w.Body, want)
	}
}

// message posts a raw message to threadChat with the given thread.
func (s *threadStack) message(t *testing.T, token, text, key, mode string) {
	t.Helper()
	s.post(t, token, "/v1/messages", `{"chat":"`+threadChat+`","text":"`+text+`","thread":{"key":"`+key+`","mode":"`+mode+`"}}`)
}

// sent waits for n messages and returns the one whose text is text.
func (s *threadStack) sent(t *testing.T, n int, text string) telegramfake.Message {
	t.Helper()
	if err := s.fake.Wait(s.ctx, n); err != nil {
		t.Fatalf("waiting for %d messages: %v; sent %+v", n, err, s.fake.Messages())
	}
	for _, m := range s.fake.Messages() {
		if m.Text == text {
			return m
		}
	}
	t.Fatalf("no message %q among %+v", text, s.fake.Messages())
	return telegramfake.Message{}
}

// opened waits for the worker to record the first message of the thread
// stored under key, and returns its id.
func (s *threadStack) opened(t *testing.T, key string) int {
	t.Helper()
	for {
		v, err := s.rdb.Get(s.ctx, keys.Bot("").Thread(threadChat, key)).Result()
		if id, _, ok := strings.Cut(v, ":"); err == nil && ok {
			n, _ := strconv.Atoi(id)
			return n
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("thread %s: %v", key, err)
		}
		select {
		case <-s.ctx.Done():
			t.Fatalf("thread %s not recorded (%q)", key, v)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lookup is the fake's current copy of the message with id in threadChat.
func (s *threadStack) lookup(t *testing.T, id int) telegramfake.Message {
	t.Helper()
	chat, _ := strconv.ParseInt(threadChat, 10, 64)
	m, ok := s.fake.Lookup(chat, id)
	if !ok {
		t.Fatalf("message %d not held", id)
	}
	return m
}

// TestRawMessageCannotHijackAlertThread: an alert opens its thread; a raw
// message naming the alert's key as it used to be spelled, or a thread
// never opened, goes out as a new message; one naming the alert's thread as
// it is stored ("alert/…") gets a 403 from a sender's token. Neither edits
// or replies to the alert's message. A token with the operate scope may
// edit it, and the alert's own resolution still replies to it.
func TestRawMessageCannotHijackAlertThread(t *testing.T) {
	t.Parallel()
	s := newThreadStack(t)
	s.post(t, tokenA, "/v1/alerts", `{"title":"DiskFull on db-1","key":"disk-db1"}`)
	alertID := s.opened(t, "alert/by/api/disk-db1/default")
	alertText := s.lookup(t, alertID).Text
	n := 1
	for _, mode := range []string{"edit", "reply", "open"} {
		body := `{"chat":"` + threadChat + `","text":"false alarm","thread":{"key":"alert/by/api/disk-db1/default","mode":"` + mode + `"}}`
		want := http.StatusForbidden
		if mode == "open" {
			want = http.StatusBadRequest
		}
		s.postWant(t, tokenA, "/v1/messages", body, want)
	}
	for _, key := range []string{"disk-db1/default", "never-opened"} {
		for _, mode := range []string{"edit", "reply"} {
			text := "resolved, false alarm: " + mode + " " + key
			s.message(t, tokenA, text, key, mode)
			n++
			m := s.sent(t, n, text)
			if m.ReplyTo != nil || m.Edited != 0 {
				t.Errorf("%s of %s: sent as %+v, want a new message of its own", mode, key, m)
			}
		}
	}
	if a := s.lookup(t, alertID); a.Edited != 0 || a.Text != alertText {
		t.Fatalf("the alert's message was edited: %+v", a)
	}
	if got := s.opened(t, "alert/by/api/disk-db1/default"); got != alertID {
		t.Fatalf("the alert's thread now holds message %d, want %d", got, alertID)
	}
	// The operator's note: tokenB (admin) carries the operate scope.
	s.message(t, tokenB, "false alarm (ops)", "alert/by/api/disk-db1/default", "edit")
	for {
		if a := s.lookup(t, alertID); a.LastEdit != nil && a.LastEdit.Text == "false alarm (ops)" {
			break
		}
		select {
		case <-s.ctx.Done():
			t.Fatal("the operate token's edit did not reach the alert's message")
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.post(t, tokenA, "/v1/alerts", `{"title":"DiskFull on db-1","key":"disk-db1","status":"resolved"}`)
	for _, m := range s.fake.Messages()[:n] {
		if m.ReplyTo != nil {
			t.Fatalf("message %+v is a reply", m)
		}
	}
	if err := s.fake.Wait(s.ctx, n+1); err != nil {
		t.Fatal(err)
	}
	if r := s.fake.Messages()[n]; r.ReplyTo == nil || r.ReplyTo.MessageID != alertID {
		t.Fatalf("the alert's resolution %+v does not reply to message %d", r, alertID)
	}
}

// TestThreadsArePerToken: token A opens thread "x"; token B's reply and
// edit naming "x" do not reach A's message, while A's own reply and edit
// do.
func TestThreadsArePerToken(t *testing.T) {
	t.Parallel()
	s := newThreadStack(t)
	s.message(t, tokenA, "A opens x", "x", "open")
	first := s.opened(t, "msg/api/x")
	s.message(t, tokenB, "B replies to x", "x", "reply")
	s.message(t, tokenB, "B edits x", "x", "edit")
	s.message(t, tokenA, "A replies to x", "x", "reply")
	s.message(t, tokenA, "A edits x", "x", "edit")
	if m := s.sent(t, 4, "B replies to x"); m.ReplyTo != nil {
		t.Errorf("B's reply replies to %+v", m.ReplyTo)
	}
	if m := s.sent(t, 4, "B edits x"); m.ReplyTo != nil || m.MessageID == first {
		t.Errorf("B's edit went out as %+v, want a new message", m)
	}
	if m := s.sent(t, 4, "A replies to x"); m.ReplyTo == nil || m.ReplyTo.MessageID != first {
		t.Errorf("A's reply replies to %+v, want message %d", m.ReplyTo, first)
	}
	for {
		m := s.lookup(t, first)
		if m.Edited > 0 {
			if m.Edited != 1 || m.LastEdit == nil || m.LastEdit.Text != "A edits x" {
				t.Fatalf("A's message edited %d times, last %+v; want A's edit alone", m.Edited, m.LastEdit)
			}
			break
		}
		select {
		case <-s.ctx.Done():
			t.Fatal("A's edit did not reach A's message")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(s.fake.Messages()); n != 4 {
		t.Fatalf("%d messages sent, want 4 (A's edit replaces its first)", n)
	}
}
