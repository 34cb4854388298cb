package webui

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// Secrets of the test deployment. The bot token must never reach the UI; the
// API token is what the UI demands.
const (
	apiToken = "webui-test-api-token-7c1d"
	// adminToken is the web UI's admin credential: only it may change
	// anything.
	adminToken = "webui-test-admin-token-93fa"
	botToken   = "7000001:HERALD-secret-bot-token-never-in-the-ui"
	// blockedChat is the private chat whose user blocked the bot.
	blockedChat = "4242"
	// blockedText is the text of the message that gets archived.
	blockedText = "Disk /var is 97% full on db-1"
)

// pendingMessages are left in the queues for the UI to count.
var pendingMessages = []jobs.Request{
	{Queue: jobs.QueueCritical, Message: jobs.SendMessage{Chat: "-1001234567890", Text: "<b>PagerDuty</b>: api-gateway 5xx above 2%", ParseMode: "HTML"}},
	{Queue: jobs.QueueDefault, Message: jobs.SendMessage{Chat: "1001", Text: "Deploy of billing v2.14.0 finished"}},
	{Queue: jobs.QueueDefault, Message: jobs.SendMessage{Chat: "@herald_alerts", Text: "Nightly backup verified", DisableNotification: true}},
	{Queue: jobs.QueueLow, Message: jobs.SendMessage{Chat: "1002", Text: "Weekly report: 1,204 alerts delivered"}},
}

// stack is a seeded Redis: tasks pending in every queue and one task the
// worker archived because the chat blocked the bot.
type stack struct {
	redis    *redistest.Server
	rdb      *redis.Client
	log      *slog.Logger
	archived *asynq.TaskInfo
}

// testLogger writes warnings and errors to the test's output.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// seed starts redis-server and a fake Telegram, lets a real worker archive
// one message to a blocked chat, stops the worker, and enqueues
// pendingMessages.
func seed(t *testing.T) *stack {
	t.Helper()
	srv := redistest.Start(t)
	s := &stack{redis: srv, rdb: srv.Client(t), log: testLogger(t)}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	fake, err := telegramfake.Start(telegramfake.Config{Token: botToken, Logger: s.log})
	if err != nil {
		t.Fatalf("start fake Telegram: %v", err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	fake.SetChat(blockedChat, telegramfake.ChatBehavior{Blocked: true})

	enq := app.NewEnqueuer(s.rdb, producerConfig(srv, false))
	res, err := enq.Enqueue(ctx, jobs.Request{Queue: jobs.QueueDefault,
		Message: jobs.SendMessage{Chat: blockedChat, Text: blockedText}})
	if err != nil {
		t.Fatalf("enqueue the message to the blocked chat: %v", err)
	}
	s.archived = runWorkerUntilArchived(ctx, t, s, fake.URL(), res)

	for _, req := range pendingMessages {
		if _, err := enq.Enqueue(ctx, req); err != nil {
			t.Fatalf("enqueue %q into %s: %v", req.Message.Text, req.Queue, err)
		}
	}
	return s
}

// runWorkerUntilArchived runs a worker against the fake Bot API at apiURL
// until the task of res is archived, stops it, and returns the task.
func runWorkerUntilArchived(ctx context.Context, t *testing.T, s *stack, apiURL string, res jobs.Result) *asynq.TaskInfo {
	t.Helper()
	wcfg := settings.Worker{
		Redis:    redisconn.Config{URL: s.redis.URL()},
		Telegram: settings.Telegram{Token: botToken, Client: telegram.Config{APIURL: apiURL}},
		Worker:   worker.Config{Concurrency: 2},
	}.WithDefaults()
	wcfg.Listen = ""
	bots, err := app.NewSenders(wcfg)
	if err != nil {
		t.Fatalf("NewSenders: %v", err)
	}
	w, err := app.NewWorker(wcfg, bots, prometheus.NewRegistry(), s.log)
	if err != nil {
		t.Fatalf("NewWorker: %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker stopped with an error: %v", err)
		}
	}()

	insp := asynq.NewInspectorFromRedisClient(s.rdb)
	// asynq announces no state change, so the task's state is polled.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := insp.GetTaskInfo(res.Queue, res.TaskID)
		if err == nil && info.State == asynq.TaskStateArchived {
			return info
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s was not archived in time (last state %v, err %v)", res.TaskID, stateOf(info), err)
		case err := <-done:
			done <- err
			t.Fatalf("worker stopped before archiving the task: %v", err)
		case <-tick.C:
		}
	}
}

func stateOf(info *asynq.TaskInfo) string {
	if info == nil {
		return "unknown"
	}
	return info.State.String()
}

// producerConfig is the producer's configuration on srv.
func producerConfig(srv *redistest.Server, readOnly bool) settings.Producer {
	cfg := settings.Producer{Redis: redisconn.Config{URL: srv.URL()}, Server: producer.ServerConfig{Listen: "127.0.0.1:0", MonitoringReadOnly: readOnly}, Keyring: httpapi.KeyringConfig{APIToken: apiToken, AdminToken: adminToken}}.WithDefaults()
	return cfg
}

// serveProducer serves the producer's HTTP handler on a loopback port and
// returns its base URL; the server stops at test cleanup.
func (s *stack) serveProducer(t *testing.T, readOnly bool) string {
	t.Helper()
	cfg := producerConfig(s.redis, readOnly)
	h, cleanup, err := app.ProducerHandler(cfg, s.rdb, asynq.RedisClientOpt{Addr: s.redis.Addr}, app.NewRegistry(), s.log)
	if err != nil {
		t.Fatalf("ProducerHandler: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	ts := httptest.NewUnstartedServer(h)
	_ = ts.Listener.Close()
	ts.Listener = ln
	ts.Config.ReadHeaderTimeout = 10 * time.Second
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		cleanup()
	})
	return ts.URL
}

// errNotArchived is returned by archivedStillThere when the task is gone.
var errNotArchived = errors.New("task is no longer archived")

// archivedStillThere checks that the archived task was left alone.
func (s *stack) archivedStillThere() error {
	info, err := asynq.NewInspectorFromRedisClient(s.rdb).GetTaskInfo(s.archived.Queue, s.archived.ID)
	if err != nil {
		return err
	}
	if info.State != asynq.TaskStateArchived {
		return errNotArchived
	}
	return nil
}
