package interact

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/silences"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// testBots are the bots every test's fake serves.
var testBots = []string{"pages", "status"}

// testChat is the private chat alerts go to.
const testChat = "4242"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is one Redis, a fake Bot API serving testBots, and a worker
// that sends messages and handles presses.
type harness struct {
	ctx     context.Context
	redis   *redistest.Server
	rdb     *redis.Client
	fake    *telegramfake.Server
	bots    map[string]bot
	edits   *jobs.Enqueuer
	store   *silences.Store
	metrics *metrics
	reg     *prometheus.Registry
	handler *handler
	insp    *asynq.Inspector
	log     *slog.Logger
	// chats holds the blocked chats; hooked records what the handler's
	// OnBlocked was told.
	chats  *chats.Store
	hooked *hookLog
}

// hookLog records the calls of a handler's OnBlocked.
type hookLog struct {
	mu    sync.Mutex
	calls []string // "bot chat reason"
}

func (l *hookLog) record(_ context.Context, bot, chat string, b chats.Block) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, bot+" "+chat+" "+b.Reason)
	return nil
}

func (l *hookLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

type options struct {
	// poller attaches a poller to the worker.
	poller bool
	// receiver, when set, is attached to the worker instead (built from
	// the harness before the worker starts).
	receiver func(h *harness) worker.Component
}

func setup(t *testing.T, o options) *harness {
	t.Helper()
	srv := redistest.Start(t)
	tokens := map[string]string{}
	for i, name := range testBots {
		tokens[name] = "20000000" + string(rune('1'+i)) + ":" + name + "-token"
	}
	fake, err := telegramfake.Start(telegramfake.Config{Tokens: tokens, WebhookRetry: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	senders := map[string]worker.Sender{}
	for name, tok := range tokens {
		c, err := telegram.New(telegram.Config{Token: tok, APIURL: fake.URL(), Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		senders[name] = c
	}
	reg := prometheus.NewRegistry()
	w, err := worker.New(worker.Config{
		Redis:           &redis.UniversalOptions{Addrs: []string{srv.Addr}},
		Bots:            senders,
		BackoffBase:     100 * time.Millisecond,
		BackoffCap:      time.Second,
		ShutdownTimeout: 5 * time.Second,
		Logger:          log,
		Registerer:      reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	h := &harness{redis: srv, rdb: rdb, fake: fake, bots: BotsOf(senders), reg: reg, log: log, metrics: newMetrics(reg)}
	h.edits = jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Queues: jobs.DefaultQueues(), DefaultQueue: jobs.QueueCritical,
		Limits: jobs.Limits{Bots: testBots}})
	h.store, err = silences.New(silences.Config{Redis: rdb, Items: h.edits, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h.chats, h.hooked = chats.NewStore(rdb, chats.WithMetrics(chats.NewMetrics(reg))), &hookLog{}
	h.handler, err = newHandler(handlerConfig{Redis: rdb, Bots: h.bots, Edits: h.edits, EditQueue: jobs.QueueCritical,
		Silences: h.store, Chats: h.chats, OnBlocked: h.hooked.record, Escalations: escalation.NewStore(rdb, nil), Commands: roster.NewCommands(rdb),
		BackoffBase: 50 * time.Millisecond, BackoffCap: 500 * time.Millisecond, Logger: log, Metrics: h.metrics})
	if err != nil {
		t.Fatal(err)
	}
	w.Handle(TypeUpdate, h.handler)
	if o.poller {
		w.Attach(h.newPoller(t, "w1"))
	}
	if o.receiver != nil {
		w.Attach(o.receiver(h))
	}
	h.insp = asynq.NewInspector(asynq.RedisClientOpt{Addr: srv.Addr})
	t.Cleanup(func() { _ = h.insp.Close() })
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker.Run: %v", err)
		}
	})
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(stop)
	h.ctx = ctx
	return h
}

// tasks returns tasks on the harness's Redis.
func (h *harness) tasks(t *testing.T) *tasks {
	t.Helper()
	tasks, err := newTasks(tasksConfig{Redis: h.rdb, Metrics: h.metrics})
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// newPoller returns a poller of every test bot with short leases, named
// owner.
func (h *harness) newPoller(t *testing.T, owner string) *poller {
	t.Helper()
	p, err := newPoller(pollerConfig{Redis: h.rdb, Bots: h.bots, Tasks: h.tasks(t), Owner: owner,
		LeaseTTL: time.Second, AcquireEvery: 100 * time.Millisecond, ErrorDelay: 100 * time.Millisecond,
		Logger: h.log.With("poller", owner), Metrics: h.metrics})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// subject is an alert's subject for bot with all buttons.
func subject(bot, key string) buttons.Subject {
	return buttons.Subject{
		Bot: bot, Chat: testChat, ThreadKey: key,
		Text: "<b>FIRING</b> disk full on db-1 &amp; db-2", ParseMode: "HTML",
		Alert:    "DiskFull on db-1",
		Matchers: []buttons.Matcher{{Name: "source", Value: "grafana"}, {Name: "labels.alertname", Value: "DiskFull"}},
		Actions:  buttons.Actions,
	}
}

// sendAlert sends the message of s with its buttons, opening its thread,
// and returns it as the fake holds it.
func (h *harness) sendAlert(t *testing.T, s buttons.Subject) telegramfake.Message {
	t.Helper()
	kb, err := buttons.Keyboard(h.ctx, h.rdb, s, jobs.ThreadRetention)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.edits.Enqueue(h.ctx, jobs.Request{Message: jobs.SendMessage{Bot: s.Bot, Chat: s.Chat, Text: s.Text, ParseMode: s.ParseMode,
		Buttons: kb, Thread: &jobs.Thread{Key: s.ThreadKey, Mode: jobs.ThreadOpen}}, Queue: jobs.QueueDefault})
	if err != nil {
		t.Fatal(err)
	}
	var msg telegramfake.Message
	h.waitFor(t, "the alert's message", func() bool {
		for _, m := range h.fake.MessagesOf(s.Bot) {
			if m.Text == s.Text && m.ReplyMarkup != nil && m.ReplyMarkup.InlineKeyboard[0][0].CallbackData == kb.Rows()[0][0].Data {
				msg = m
				return true
			}
		}
		return false
	})
	return msg
}

// press presses the button of action on msg as user.
func (h *harness) press(t *testing.T, msg telegramfake.Message, user telegramfake.User, action string) telegramfake.CallbackQuery {
	t.Helper()
	cur, _ := h.fake.Lookup(msg.ChatID, msg.MessageID)
	for _, row := range cur.Current().ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			if a, _, ok := buttons.ParseData(b.CallbackData); ok && a == action {
				q, err := h.fake.Press(msg.Bot, msg.ChatID, msg.MessageID, user, b.CallbackData)
				if err != nil {
					t.Fatal(err)
				}
				return q
			}
		}
	}
	t.Fatalf("message %d has no %s button: %+v", msg.MessageID, action, cur.Current().ReplyMarkup)
	return telegramfake.CallbackQuery{}
}

// answered waits until the query q of bot is answered and returns it.
func (h *harness) answered(t *testing.T, bot, id string) telegramfake.CallbackQuery {
	t.Helper()
	var out telegramfake.CallbackQuery
	h.waitFor(t, "the answer to query "+id, func() bool {
		for _, q := range h.fake.CallbackQueries(bot) {
			if q.ID == id && q.Answer != nil {
				out = q
				return true
			}
		}
		return false
	})
	return out
}

// current waits until msg reads as cond wants and returns it.
func (h *harness) current(t *testing.T, msg telegramfake.Message, what string, cond func(telegramfake.Edit) bool) telegramfake.Edit {
	t.Helper()
	var out telegramfake.Edit
	h.waitFor(t, what, func() bool {
		m, _ := h.fake.Lookup(msg.ChatID, msg.MessageID)
		out = m.Current()
		return cond(out)
	})
	return out
}

// waitFor waits until cond holds, after every change the fake records
// and at least every 50ms (for conditions on Redis).
func (h *harness) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	for !cond() {
		wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_ = h.fake.WaitUntil(wctx, cond)
		wcancel()
		if ctx.Err() != nil {
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// presses sums herald_telegram_presses_total over the labels given.
func (h *harness) presses(t *testing.T, labels map[string]string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "herald_telegram_presses_total" {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// keyboardActions lists the actions of a message's buttons.
func keyboardActions(e telegramfake.Edit) []string {
	var out []string
	if e.ReplyMarkup == nil {
		return nil
	}
	for _, row := range e.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			a, _, _ := buttons.ParseData(b.CallbackData)
			out = append(out, a)
		}
	}
	return out
}

var (
	alice = telegramfake.User{ID: 1001, FirstName: "Alice", Username: "alice"}
	bob   = telegramfake.User{ID: 1002, FirstName: "Bob", Username: "bobby"}
)

func hasLine(text, line string) bool { return strings.Contains(text, line) }
