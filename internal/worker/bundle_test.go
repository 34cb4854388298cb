package worker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// scale runs Telegram's clock (in the fake) and Herald's limits 10x faster,
// so tests exercise the real limits without waiting minutes.
const scale = 10

// scaledLimits are Telegram's documented windows with their spans divided
// by scale, as the fake applies them.
func scaledLimits() ratelimit.Config {
	return ratelimit.Config{
		Bot:     ratelimit.Per(30, time.Second/scale),
		Private: ratelimit.Per(1, time.Second/scale),
		Group:   ratelimit.Per(1, time.Second/scale).And(ratelimit.Per(20, time.Minute/scale)),
	}
}

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

type testBundle struct {
	redis   *redistest.Server
	rdb     *redis.Client
	fake    *telegramfake.Server
	enq     *jobs.Enqueuer
	insp    *asynq.Inspector
	worker  *worker.Worker
	logs    *syncBuffer
	ctx     context.Context
	token   string
	metrics *prometheus.Registry
}

type options struct {
	token       string // the worker's token; default the fake's
	apiURL      string // default the fake's URL
	timeout     time.Duration
	concurrency int
	maxRetry    int
	limits      *ratelimit.Config // default scaledLimits()
	waiters     int               // worker.Config.Waiters
	countMarkup bool              // the fake counts markup into the length limit
	// bots, when set, are served besides nothing else: the fake knows each
	// by the token botToken gives it, and the worker sends with
	// workerTokens[name] when set (a wrong token: Telegram's 401).
	bots         []string
	workerTokens map[string]string
	// callbacks, when set, turns status callbacks on with this master key
	// (and 127.0.0.1 allowed); the events wait in their queue.
	callbacks string
	// paid, when set, is the default bot's paid broadcasts (the worker then
	// counts retry_after, and Telegram's free second, in the fake's
	// shorter seconds), and fakePaid the fake's paid broadcasts.
	paid     *worker.PaidBroadcast
	fakePaid telegramfake.Paid
	// realTime runs the fake in Telegram's time and Herald at Telegram's
	// limits, with a guard of 40ms.
	realTime bool
	// fakeUnlimited switches the fake's limits off; stopped leaves the
	// worker to testBundle.start.
	fakeUnlimited, stopped bool
}

// telegramLimits are Telegram's documented windows in its own time, with
// a guard that a busy machine's late wake-ups stay well inside.
func telegramLimits() ratelimit.Config {
	return ratelimit.Config{
		Bot:     ratelimit.Per(30, time.Second),
		Private: ratelimit.Per(1, time.Second),
		Group:   ratelimit.Per(1, time.Second).And(ratelimit.Per(20, time.Minute)),
		Guard:   40 * time.Millisecond,
	}
}

// botToken is the token the fake gives the bot named name in tests.
func botToken(i int, name string) string {
	return "20000000" + string(rune('1'+i)) + ":" + name + "-token"
}

func setup(t *testing.T, o options) *testBundle { return setupTB(t, o) }

func setupB(b *testing.B) *testBundle { return setupTB(b, options{}) }

func setupTB(t testing.TB, o options) *testBundle {
	t.Helper()
	srv := redistest.Start(t)
	timeScale := float64(scale)
	if o.realTime {
		timeScale = 1
	}
	fcfg := telegramfake.Config{TimeScale: timeScale, CountMarkup: o.countMarkup, PaidBroadcast: o.fakePaid} // Telegram's limits are the fake's defaults
	if o.fakeUnlimited {
		fcfg.Bot, fcfg.Private, fcfg.Group = telegramfake.Unlimited, telegramfake.Unlimited, telegramfake.Unlimited
	}
	if len(o.bots) > 0 {
		fcfg.Tokens = map[string]string{}
		for i, name := range o.bots {
			fcfg.Tokens[name] = botToken(i, name)
		}
	}
	fake, err := telegramfake.Start(fcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	if o.token == "" {
		o.token = telegramfake.DefaultToken
	}
	if o.apiURL == "" {
		o.apiURL = fake.URL()
	}
	if o.timeout == 0 {
		o.timeout = 5 * time.Second
	}
	var sender worker.Sender
	var bots map[string]worker.Sender
	if len(o.bots) == 0 {
		c, err := telegram.New(telegram.Config{Token: o.token, APIURL: o.apiURL, Timeout: o.timeout})
		if err != nil {
			t.Fatal(err)
		}
		sender = c
	} else {
		bots = map[string]worker.Sender{}
		for i, name := range o.bots {
			tok := botToken(i, name)
			if wt, ok := o.workerTokens[name]; ok {
				tok = wt
			}
			c, err := telegram.New(telegram.Config{Token: tok, APIURL: o.apiURL, Timeout: o.timeout})
			if err != nil {
				t.Fatal(err)
			}
			bots[name] = c
		}
	}
	logs := &syncBuffer{}
	reg := prometheus.NewRegistry()
	limits := scaledLimits()
	if o.realTime {
		limits = telegramLimits()
	}
	if o.limits != nil {
		limits = *o.limits
	}
	var paid worker.PaidBroadcast
	var unit time.Duration
	if o.paid != nil {
		paid, unit = *o.paid, fake.RetryAfterUnit()
	}
	var events *statushook.Emitter
	if o.callbacks != "" {
		var err error
		if events, err = statushook.NewEmitter(srv.Client(t), statushook.Config{Secret: o.callbacks, Allow: []string{"127.0.0.1:*"}}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := worker.New(worker.Config{
		Events:          events,
		Redis:           &redis.UniversalOptions{Addrs: []string{srv.Addr}},
		Sender:          sender,
		Bots:            bots,
		Limits:          limits,
		Paid:            paid,
		RetryAfterUnit:  unit,
		Concurrency:     o.concurrency,
		Waiters:         o.waiters,
		BackoffBase:     100 * time.Millisecond,
		BackoffCap:      time.Second,
		ShutdownTimeout: 5 * time.Second,
		Logger:          slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer:      reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !o.stopped {
		runWorker(t, w)
	}
	rdb := srv.Client(t)
	maxRetry := o.maxRetry
	if maxRetry == 0 {
		maxRetry = 5
	}
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{MaxRetry: maxRetry})
	t.Cleanup(func() { _ = enq.Close() })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: srv.Addr})
	t.Cleanup(func() { _ = insp.Close() })
	tctx, tcancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(tcancel)
	return &testBundle{redis: srv, rdb: rdb, fake: fake, enq: enq, insp: insp, worker: w, logs: logs, ctx: tctx, token: o.token, metrics: reg}
}

func (b *testBundle) send(t *testing.T, m jobs.SendMessage, queue string) jobs.Result {
	t.Helper()
	res, err := b.enq.Enqueue(b.ctx, jobs.Request{Message: m, Queue: queue})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return res
}

// waitTask polls the task's state until cond holds. asynq has no change
// notification, so polling with a deadline is the only way to observe it.
func (b *testBundle) waitTask(t *testing.T, queue, id string, cond func(*asynq.TaskInfo) bool) *asynq.TaskInfo {
	t.Helper()
	for {
		info, err := b.insp.GetTaskInfo(queue, id)
		if err == nil && cond(info) {
			return info
		}
		if b.ctx.Err() != nil {
			t.Fatalf("task %s: condition not met before deadline (last: %+v, err %v)", id, info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until a task finished (asynq deletes completed tasks that
// have no retention).
func (b *testBundle) waitGone(t *testing.T, queue, id string) {
	t.Helper()
	for {
		_, err := b.insp.GetTaskInfo(queue, id)
		if errors.Is(err, asynq.ErrTaskNotFound) {
			return
		}
		if b.ctx.Err() != nil {
			t.Fatalf("task %s still present at deadline (err %v)", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *testBundle) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := b.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// dumpRedis returns every key and value in Redis as text.
func dumpRedis(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	ctx := context.Background()
	var sb strings.Builder
	iter := rdb.Scan(ctx, 0, "*", 100).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		sb.WriteString(k + "\n")
		switch rdb.Type(ctx, k).Val() {
		case "string":
			sb.WriteString(rdb.Get(ctx, k).Val())
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				sb.WriteString(f + "=" + v + "\n")
			}
		case "list":
			sb.WriteString(strings.Join(rdb.LRange(ctx, k, 0, -1).Val(), "\n"))
		case "set":
			sb.WriteString(strings.Join(rdb.SMembers(ctx, k).Val(), "\n"))
		case "zset":
			sb.WriteString(strings.Join(rdb.ZRange(ctx, k, 0, -1).Val(), "\n"))
		case "stream":
			for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					sb.WriteString(f + "=" + toString(v) + "\n")
				}
			}
		}
		sb.WriteString("\n")
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// runWorker runs w until the test ends, and fails the test if Run returns
// an error.
// start runs the worker of a bundle set up with options.stopped.
func (b *testBundle) start(t testing.TB) { runWorker(t, b.worker) }

func runWorker(t testing.TB, w *worker.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker.Run: %v", err)
		}
	})
}
