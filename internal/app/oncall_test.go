package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/escalation"
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

// oncallRoutes is the worked example with its timers scaled by 60 (the
// 2 minutes before the on-call DM are 2 s): the alert's chat, then Alice,
// who is on call, then Carol. Alerts of team dm first message Dana, who
// never started the bot, and wait a long minute for her.
const oncallRoutes = `
schedules:
  - name: primary
    time_zone: Europe/Berlin
    layers:
      - users: [{id: 1001, name: Alice, username: alice_oncall}]
        shift: weekly
        handoff: "09:00"
        start: 2026-01-05
escalation_policies:
  - name: db-critical
    steps:
      - {notify: [{chat: "42"}], wait: 4s}
      - {notify: [{on_call: primary}], wait: 2s}
      - {notify: [{user: {id: 1003, name: Carol}}], wait: 1s}
  - name: dm-first
    steps:
      - {notify: [{user: {id: 1004, name: Dana}}], wait: 60s}
      - {notify: [{user: {id: 1003, name: Carol}}]}
  - name: dm-ack
    steps:
      - {notify: [{on_call: primary}], wait: 60s}
      - {notify: [{user: {id: 1003, name: Carol}}]}
routes:
  - name: db
    match: {labels: {team: db}}
    escalation: db-critical
    buttons: [ack]
    destinations: ["42"]
  - name: dm
    match: {labels: {team: dm}}
    escalation: dm-first
    destinations: ["43"]
  - name: dmack
    match: {labels: {team: dmack}}
    escalation: dm-ack
    buttons: [ack]
    destinations: ["44"]
`

// oncallStack is two producers (their engines, announcers and APIs) and a
// worker with its poller of presses, on one Redis and a fake Telegram
// whose clock runs ten times faster (the limits are scaled alike).
type oncallStack struct {
	producers []*Producer
	rdb       redis.UniversalClient
	fake      *telegramfake.Server
	ctx       context.Context
	// restart replaces producer i with a new one on the same settings.
	restart func(i int)
}

func newOnCallStack(t *testing.T, opts ...func(*settings.Producer)) *oncallStack {
	t.Helper()
	const scale = 10
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	fake.SetChat("1004", telegramfake.ChatBehavior{NeverStarted: true})
	client, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fake.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	wcfg := settings.Worker{Redis: redisconn.Config{URL: srv.URL()}}.WithDefaults()
	wcfg.Worker.Limits = ratelimit.Config{
		Bot:     ratelimit.Per(30, time.Second/scale),
		Private: ratelimit.Per(1, time.Second/scale),
		Group:   ratelimit.Per(1, time.Second/scale).And(ratelimit.Per(20, time.Minute/scale)),
	}
	wcfg.Worker.BackoffBase, wcfg.Worker.BackoffCap = 100*time.Millisecond, time.Second
	w, err := NewWorker(wcfg, map[string]worker.Sender{"default": client}, prometheus.NewRegistry(), log)
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
	file := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(file, []byte(oncallRoutes), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &oncallStack{fake: fake, rdb: rdb}
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Keyring: httpapi.KeyringConfig{APIToken: "t"},
		Routes: alerts.RoutesConfig{File: file}, Escalation: escalation.Settings{CheckInterval: 100 * time.Millisecond}}.WithDefaults()
	for _, o := range opts {
		o(&cfg)
	}
	start := func() *Producer {
		p, err := NewProducer(cfg, rdb, asynq.RedisClientOpt{Addr: srv.Addr}, NewRegistry(), log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s.producers = []*Producer{start(), start()}
	s.restart = func(i int) {
		s.producers[i].Close()
		s.producers[i] = start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	s.ctx = ctx
	return s
}

// alert posts a critical alert to producer i.
func (s *oncallStack) alert(t *testing.T, i int, key, team string) {
	t.Helper()
	s.alertAs(t, i, "t", key, team, "firing")
}

// alertAs posts a critical alert of status to producer i with token.
func (s *oncallStack) alertAs(t *testing.T, i int, token, key, team, status string) {
	t.Helper()
	body := fmt.Sprintf(`{"title": "disk full %s", "severity": "critical", "key": %q, "labels": {"team": %q}, "status": %q}`, key, key, team, status)
	req := httptest.NewRequest(http.MethodPost, "/v1/alerts", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.producers[i%len(s.producers)].Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("alert %s: %d %s", key, rec.Code, rec.Body)
	}
}

// waitFor waits until cond holds over the fake's messages.
func (s *oncallStack) waitFor(t *testing.T, what string, cond func(msgs []telegramfake.Message) bool) {
	t.Helper()
	if err := s.fake.WaitUntil(s.ctx, func() bool { return cond(s.fake.Messages()) }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// count counts the messages in chat whose text contains every part.
func count(msgs []telegramfake.Message, chat int64, parts ...string) int {
	n := 0
next:
	for _, m := range msgs {
		if m.ChatID != chat {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(m.Text, p) {
				continue next
			}
		}
		n++
	}
	return n
}

// Alerts under a 3-step policy, through two producers: those nobody
// acknowledges go through every step exactly once, each a reply in the
// alert's thread; those acknowledged during step 1 get no step 2; a step
// whose DM Telegram refuses (a user who never started the bot) shows why
// and moves on at once instead of waiting its minute.
func TestEscalationEndToEnd(t *testing.T) {
	s := newOnCallStack(t)
	keys := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	for i, k := range keys {
		s.alert(t, i, k, "db")
	}
	start := time.Now()
	s.alert(t, 0, "d1", "dm")
	// a1 and a2 are acknowledged once step 1 is taken (its note replies
	// to their message), well within its 4 s.
	var wg sync.WaitGroup
	var acked []int
	for _, k := range keys[:2] {
		var msg telegramfake.Message
		s.waitFor(t, k+"'s step 1", func(msgs []telegramfake.Message) bool {
			for _, m := range msgs {
				if m.ChatID == 42 && strings.Contains(m.Text, "disk full "+k) && m.ReplyMarkup != nil {
					msg = m
				}
			}
			for _, m := range msgs {
				if msg.MessageID != 0 && m.ReplyTo != nil && m.ReplyTo.MessageID == msg.MessageID && strings.Contains(m.Text, "step 1 of 3") {
					return true
				}
			}
			return false
		})
		acked = append(acked, msg.MessageID)
		data := msg.ReplyMarkup.InlineKeyboard[0][0].CallbackData
		if _, err := s.fake.Press("", 42, msg.MessageID, telegramfake.User{ID: 2001, FirstName: "Bob", Username: "bob_ops"}, data); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.fake.WaitUntil(s.ctx, func() bool {
				m, _ := s.fake.Lookup(42, msg.MessageID)
				return strings.Contains(m.Current().Text, "Acknowledged by @bob_ops")
			})
		}()
	}
	wg.Wait()
	for _, id := range acked {
		if m, _ := s.fake.Lookup(42, id); !strings.Contains(m.Current().Text, "s after firing") {
			t.Errorf("the acknowledgement does not say how long after firing: %q", m.Current().Text)
		}
	}
	// A producer restarts while the escalations are under way.
	s.restart(0)
	// The DM refused: Carol hears of d1 long before Dana's minute is up.
	s.waitFor(t, "d1's step 2", func(msgs []telegramfake.Message) bool {
		return count(msgs, 1003, "Escalated to you: disk full d1") == 1 && count(msgs, 43, "Could not reach Dana", "not started a chat") == 1
	})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("step 2 of d1 came %v after the alert, want at once after the refused DM", took)
	}
	s.waitFor(t, "the end of every unacknowledged escalation", func(msgs []telegramfake.Message) bool {
		return count(msgs, 42, "Escalation ended") == 4
	})
	msgs := s.fake.Messages()
	for _, k := range keys {
		acked := k == "a1" || k == "a2"
		title := "disk full " + k
		want := map[bool]int{true: 0, false: 1}[acked]
		if n := count(msgs, 1001, "Escalated to you: "+title); n != want {
			t.Errorf("%s: Alice (on call) got %d step-2 messages, want %d", k, n, want)
		}
		if n := count(msgs, 1003, "Escalated to you: "+title); n != want {
			t.Errorf("%s: Carol got %d step-3 messages, want %d", k, n, want)
		}
	}
	if n := count(msgs, 42, "escalated to chat 42, step 1 of 3"); n != len(keys) {
		t.Errorf("%d step-1 notes in the alerts' chat, want %d", n, len(keys))
		for _, m := range msgs {
			if m.ChatID == 42 {
				t.Logf("%d (reply to %v): %q", m.MessageID, m.ReplyTo, m.Text)
			}
		}
	}
	if n := count(msgs, 42, "escalated to @alice_oncall (on call in primary), step 2 of 3"); n != 4 {
		t.Errorf("%d step-2 notes, want 4", n)
	}
	// Every note is a reply to its alert's message.
	for _, m := range msgs {
		if m.ChatID == 42 && strings.HasPrefix(m.Text, "↗️") && m.ReplyTo == nil {
			t.Errorf("a note is not a reply: %q", m.Text)
		}
	}
}

// The on-call person's DM carries the alert's Acknowledge button; pressing
// it there acknowledges the alert: the escalation stops, and the alert's
// message in its chat says who and how long after firing.
func TestAcknowledgeFromTheEscalationDM(t *testing.T) {
	s := newOnCallStack(t)
	s.alert(t, 0, "x1", "dmack")
	var alert, dm telegramfake.Message
	s.waitFor(t, "Alice's DM and the alert", func(msgs []telegramfake.Message) bool {
		for _, m := range msgs {
			switch {
			case m.ChatID == 1001 && strings.HasPrefix(m.Text, "🚨 Escalated to you: disk full x1"):
				dm = m
			case m.ChatID == 44 && m.ReplyTo == nil && strings.Contains(m.Text, "disk full x1"):
				alert = m
			}
		}
		return dm.MessageID != 0 && alert.MessageID != 0
	})
	if dm.ReplyMarkup == nil || alert.ReplyMarkup == nil {
		t.Fatalf("the DM's keyboard %+v, the alert's %+v; want the alert's buttons on both", dm.ReplyMarkup, alert.ReplyMarkup)
	}
	data := dm.ReplyMarkup.InlineKeyboard[0][0].CallbackData
	if want := alert.ReplyMarkup.InlineKeyboard[0][0].CallbackData; data != want {
		t.Fatalf("the DM's button sends %q, the alert's %q", data, want)
	}
	if _, err := s.fake.Press("", 1001, dm.MessageID, telegramfake.User{ID: 1001, FirstName: "Alice", Username: "alice_oncall"}, data); err != nil {
		t.Fatal(err)
	}
	if err := s.fake.WaitUntil(s.ctx, func() bool {
		m, _ := s.fake.Lookup(44, alert.MessageID)
		return strings.Contains(m.Current().Text, "Acknowledged by @alice_oncall")
	}); err != nil {
		t.Fatalf("waiting for the acknowledgement on the alert's message: %v", err)
	}
	if m, _ := s.fake.Lookup(44, alert.MessageID); !strings.Contains(m.Current().Text, "s after firing") {
		t.Errorf("the acknowledgement does not say how long after firing: %q", m.Current().Text)
	}
	// The acknowledgement took the escalation out of the due set: no step
	// can follow.
	if n, err := s.rdb.ZCard(s.ctx, keys.EscalationsDue()).Result(); err != nil || n != 0 {
		t.Errorf("%d escalations still due (%v), want none", n, err)
	}
}
