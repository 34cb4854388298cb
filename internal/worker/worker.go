package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/statushook"
)

// Config configures a worker process.
type Config struct {
	// Redis is the connection; the worker builds its own client from it so it
	// can install the wake hook. Required unless Client is set.
	Redis *redis.UniversalOptions
	// Client, when set, is used instead of a client built from Redis (with
	// the fast failover settings of redisconn.Config.NewClient); the worker
	// installs its hooks on it and closes it.
	Client redis.UniversalClient
	// Durable says which replicas must hold a send's record before the
	// worker acknowledges the task (durable.Config: off by default here).
	Durable durable.Config
	// Sender delivers the default bot's messages (keys.DefaultBot). One of
	// Sender and Bots is required.
	Sender Sender
	// Bots maps bot names to the senders of their messages, for a fleet
	// that serves several bots; Sender, when set, is the bot "default".
	// Each bot has its own rate limits, pauses and chat mappings in Redis.
	// A task for a bot that the worker does not serve is retried with
	// backoff (reason unknown_bot): the fleet may be mid-rollout.
	Bots map[string]Sender
	// Limits are the fleet-wide rate limits (see ratelimit.Config defaults).
	Limits ratelimit.Config
	// Paid is the default bot's paid broadcasts (HERALD_PAID_BROADCAST,
	// HERALD_PAID_LIMIT, HERALD_PAID_BUDGET) and BotPaid every other
	// bot's, by name; off unless set.
	Paid    PaidBroadcast
	BotPaid map[string]PaidBroadcast
	// Queues maps queue names to weights; default critical=6, default=3, low=1.
	Queues map[string]int
	// StrictPriority empties higher queues first instead of weighting.
	StrictPriority bool
	// Concurrency is the number of tasks handled at once; default 64.
	Concurrency int
	// Waiters is how many more tasks may wait for their send slot in this
	// process, for up to WaitLong, instead of going back to Redis until the
	// slot comes (a round trip through asynq's retry set and a second
	// dequeue). Each waiter is a sleeping goroutine. Default 256; -1:
	// none.
	Waiters int
	// WaitLong is the longest wait a waiter sleeps through. Default 2m.
	WaitLong time.Duration
	// ShutdownTimeout bounds how long in-flight sends may finish after
	// SIGTERM; default 25s.
	ShutdownTimeout time.Duration
	// BackoffBase and BackoffCap shape retries after 5xx, transport errors
	// and timeouts; defaults 2s and 10m.
	BackoffBase, BackoffCap time.Duration
	// SentRetention is how long the progress record of a message with parts
	// still to send is kept; default 7 days. A delivered message's record
	// lives at most FinishedRecordTTL.
	SentRetention time.Duration
	// MaxIdle bounds how long an idle worker waits between dequeue rounds
	// (HERALD_MAX_IDLE); default broker.DefaultMaxIdle, 10s. New messages wake it at once; MaxIdle only matters for
	// tasks that arrive without news (asynq's recoverer, clients that do not
	// call broker.Notify).
	MaxIdle time.Duration
	// LeaseRecoveryAfter is how long a task's lease may go without being
	// extended before Herald hands the task to another worker; default 15s,
	// at least 10s (asynq extends live leases every 5s). A negative value
	// turns the sweep off and leaves recovery to asynq (60-90s).
	LeaseRecoveryAfter time.Duration
	// RetryAfterUnit is how long one second of a 429's retry_after lasts.
	// Default 1s, Telegram's; only a fake Bot API that runs Telegram's clock
	// faster needs less.
	RetryAfterUnit time.Duration
	// LeaseSweepInterval is how often each worker looks for such tasks;
	// default 5s.
	LeaseSweepInterval time.Duration
	// Ledger configures the records of settled messages (internal/ledger):
	// how long GET /v1/messages/{id} knows them.
	Ledger ledger.Config
	// Digest configures per-destination digests: the grouping settings of
	// the asynq server, the digest handler and the aggregation-set
	// reclaimer (see digest.Config for the defaults).
	Digest digest.Config
	// Events stores the status callbacks (internal/statushook) of the
	// messages the handler settles: message.sent, message.failed, ... to
	// the message's callback_url. Nil, or an Emitter whose callbacks are
	// off, refuses every event with statushook.ErrOff.
	Events *statushook.Emitter
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the worker's metrics; nil means none.
	Registerer prometheus.Registerer
}

// WithDefaults returns the config with zero fields set to their defaults,
// the server's settings (ShutdownTimeout, LeaseRecoveryAfter, MaxIdle)
// from broker's; LeaseSweepInterval is left to broker.ServerConfig.
func (c Config) WithDefaults() Config {
	if len(c.Queues) == 0 {
		c.Queues = jobs.DefaultQueueWeights()
	}
	if c.Waiters == 0 {
		c.Waiters = defaultWaiters
	}
	if c.WaitLong == 0 {
		c.WaitLong = defaultWaitLong
	}
	if c.Concurrency == 0 {
		c.Concurrency = defaultConcurrency
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = broker.DefaultShutdownTimeout
	}
	if c.LeaseRecoveryAfter == 0 {
		c.LeaseRecoveryAfter = broker.DefaultLeaseRecoveryAfter
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = broker.DefaultMaxIdle
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = defaultBackoffBase
	}
	if c.BackoffCap == 0 {
		c.BackoffCap = defaultBackoffCap
	}
	if c.RetryAfterUnit == 0 {
		c.RetryAfterUnit = defaultRetryAfterUnit
	}
	if c.SentRetention == 0 {
		c.SentRetention = defaultSentRetention
	}
	c.Ledger = c.Ledger.WithDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Limits = c.Limits.WithDefaults()
	c.Digest = c.Digest.WithDefaults()
	if c.Paid.Limit == nil {
		c.Paid.Limit = slices.Clone(DefaultPaidLimit)
	}
	return c
}

// waiterPlaces is how many tasks may wait in memory: Waiters, with -1 (or
// any negative value) for none.
func (c Config) waiterPlaces() int { return max(c.Waiters, 0) }

// Defaults of Config, which its settings (Specs) document.
const (
	defaultConcurrency   = 64
	defaultWaiters       = 256
	defaultWaitLong      = 2 * time.Minute
	defaultBackoffBase   = 2 * time.Second
	defaultBackoffCap    = 10 * time.Minute
	defaultSentRetention = 7 * 24 * time.Hour
	// defaultRetryAfterUnit is Telegram's own second. It is also the
	// longest unit that makes sense: a longer one would wait out more than
	// a 429 asked for.
	defaultRetryAfterUnit = time.Second
)

// server is the broker's configuration derived from c: asynq runs the
// senders and the waiters (who sleep in handlers too).
func (c Config) server(m *metrics) broker.ServerConfig {
	return broker.ServerConfig{
		Queues:             c.Queues,
		StrictPriority:     c.StrictPriority,
		Concurrency:        c.Concurrency + c.waiterPlaces(),
		ShutdownTimeout:    c.ShutdownTimeout,
		MaxIdle:            c.MaxIdle,
		LeaseRecoveryAfter: c.LeaseRecoveryAfter,
		LeaseSweepInterval: c.LeaseSweepInterval,
		Groups: broker.GroupConfig{
			GracePeriod: c.Digest.GracePeriod, MaxDelay: c.Digest.MaxDelay, MaxSize: c.Digest.MaxSize,
			ReclaimAfter: c.Digest.ReclaimAfter, Aggregate: digest.Aggregate,
		},
		Logger:           c.Logger,
		OnLeaseRecovered: m.leaseRecovered,
		OnReclaimed:      func(n int) { m.DigestReclaimed.Add(float64(n)) },
	}
}

func (c Config) validate() error {
	var errs []error
	if c.Redis == nil && c.Client == nil {
		errs = append(errs, errors.New("worker: Config.Redis or Config.Client is required"))
	}
	if c.Sender == nil && len(c.Bots) == 0 {
		errs = append(errs, errors.New("worker: Config.Sender or Config.Bots is required"))
	}
	if c.Sender != nil && c.Bots[keys.DefaultBot] != nil {
		errs = append(errs, errors.New("worker: Config.Sender and Config.Bots[\"default\"] are the same bot; set one"))
	}
	for name, s := range c.Bots {
		switch {
		case !keys.ValidBotName(name):
			errs = append(errs, fmt.Errorf("worker: Config.Bots: %q is not a bot name (lower-case letters, digits, _ or -, starting with a letter)", name))
		case s == nil:
			errs = append(errs, fmt.Errorf("worker: Config.Bots[%q] is nil", name))
		}
	}
	var p config.Problems
	c.Check(&p)
	c.checkBotPaid(&p)
	c.Ledger.Check(&p)
	if err := p.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Digest.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("worker: Config.Digest: %w", err))
	}
	if err := c.server(nil).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("worker: Config: %w", err))
	}
	return errors.Join(errs...)
}

// Worker is one worker process: the broker's server running Herald's
// handlers.
type Worker struct {
	cfg     Config
	rdb     redis.UniversalClient
	srv     *broker.Server
	digests digestTasks
	handler *handler
	Metrics *metrics
	// releases takes settled messages out of their tokens' counts.
	releases *quota.Releases

	// extra and components are what Handle and Attach added.
	extra      map[string]broker.Handler
	components []Component
}

// New builds a Worker; Run starts it.
func New(cfg Config) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rdb := cfg.Client
	if rdb == nil {
		rdb = redis.NewUniversalClient(cfg.Redis)
	}
	metrics := newMetrics(cfg.Registerer)
	srvCfg := cfg.server(metrics)
	srv, err := broker.NewServer(rdb, srvCfg)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	lim, err := ratelimit.New(rdb, cfg.Limits)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	h := &handler{
		rdb: rdb, durable: durable.New(rdb, cfg.Durable), bots: map[string]*bot{}, metrics: metrics, log: cfg.Logger,
		backoffBase: cfg.BackoffBase, backoffCap: cfg.BackoffCap, sentRetention: cfg.SentRetention, ledger: ledger.NewStore(rdb, cfg.Ledger),
		chats: chats.NewStore(rdb, chats.WithMetrics(chats.NewMetrics(cfg.Registerer))), events: cfg.Events,
		retryAfterUnit: cfg.RetryAfterUnit,
		recordWindow:   srvCfg.RecordWindow(),
		waiters:        make(chan struct{}, cfg.waiterPlaces()), waitLong: cfg.WaitLong, stopping: make(chan struct{}),
		stops: newStopWatch(rdb),
	}
	metrics.initBots(cfg.BotNames())
	metrics.initPaid(cfg.paidBots())
	for name, s := range cfg.senders() {
		ed, _ := s.(editor)
		h.bots[name] = &bot{name: name, keys: keys.Bot(name), sender: s, resolver: resolverOf(s), editor: ed, limiter: cfg.paidLimiter(lim.ForBot(name), name),
			paid: newPaidWatch(cfg.paidOf(name).On)}
	}
	// Digests hand their messages to the ordinary send path through an
	// Enqueuer of the worker's own; a digest message's markup can be long
	// (links), its visible text is within Telegram's limit.
	queues := srv.Queues()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Queues: queues, DefaultQueue: queues[0], Limits: jobs.Limits{MaxTextLen: 1 << 20}})
	dg, err := digest.New(rdb, enq, cfg.Digest, h.ledger, cfg.Events)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	releases := quota.NewReleases(quota.NewStore(rdb, nil), 0, h.log)
	return &Worker{cfg: cfg, rdb: rdb, srv: srv, handler: h, Metrics: metrics, digests: digestTasks{h: h, d: dg},
		releases: releases, components: []Component{h.stops, releases}}, nil
}

// Client is the worker's Redis client (closed when Run returns).
func (w *Worker) Client() redis.UniversalClient { return w.rdb }

// Handler returns the task handler (for tests and custom muxes).
func (w *Worker) Handler() *handler { return w.handler }

// Ping checks Redis (readiness).
// Ping checks that Redis answers and is a master (readiness): a worker on
// a replica could not record anything.
func (w *Worker) Ping(ctx context.Context) error { return durable.CheckPrimary(ctx, w.rdb) }

// Run serves until ctx is done, then shuts down gracefully: it stops taking
// tasks, hands the tasks that only wait for their slot back at once, lets
// in-flight sends finish within ShutdownTimeout, and hands unfinished ones
// back to Redis.
func (w *Worker) Run(ctx context.Context) error {
	handlers := map[string]broker.Handler{
		jobs.TypeSendMessage: quotaRelease{next: w.handler, releases: w.releases},
		digest.TypeDigest:    w.digests,
		jobs.TypeDigestItem:  w.digests,
	}
	for typ, h := range w.extra {
		handlers[typ] = h
	}
	w.publishPacing(ctx)
	started, err := w.startComponents(ctx)
	if err == nil {
		err = w.srv.Run(ctx, handlers, func() { close(w.handler.stopping) })
	}
	for i := started - 1; i >= 0; i-- {
		w.components[i].Shutdown()
	}
	if cerr := w.rdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// publishPacing writes each bot's pacing (ratelimit.Limiter.Publish), from
// which the producer computes a broadcast's ETA. Best effort: a worker
// that cannot write it still sends, and the ETA falls back to the
// producer's HERALD_LIMIT_BOT.
func (w *Worker) publishPacing(ctx context.Context) {
	for name, b := range w.handler.bots {
		if err := b.limiter.Publish(ctx); err != nil {
			w.cfg.Logger.Warn("could not publish the bot's pacing; broadcast ETAs use the producer's limits", "bot", name, "error", err)
		}
	}
}

// Component is a background part of a worker process, such as the poller
// of button presses (internal/interact): Run starts it before it serves
// tasks and shuts it down after, before it closes the Redis client.
type Component interface {
	Start(ctx context.Context) error
	Shutdown()
}

// Handle has Run serve tasks of type typ with h, besides the worker's own
// (the button presses of internal/interact). Call it before Run.
func (w *Worker) Handle(typ string, h broker.Handler) {
	if w.extra == nil {
		w.extra = map[string]broker.Handler{}
	}
	w.extra[typ] = h
}

// Attach has Run start c and shut it down. Call it before Run.
func (w *Worker) Attach(c Component) { w.components = append(w.components, c) }

// startComponents starts the attached components in order and returns how
// many started; the first failure stops there.
func (w *Worker) startComponents(ctx context.Context) (int, error) {
	for i, c := range w.components {
		if err := c.Start(ctx); err != nil {
			return i, err
		}
	}
	return len(w.components), nil
}

// HTTPHandler serves /livez, /readyz and, when metrics is non-nil, /metrics.
func (w *Worker) HTTPHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if !w.srv.Ready() {
			http.Error(rw, "not serving\n", http.StatusServiceUnavailable)
			return
		}
		if err := w.Ping(ctx); err != nil {
			http.Error(rw, "redis unavailable\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = rw.Write([]byte("ok\n"))
	})
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

// senders is every bot the worker serves, by name.
func (c Config) senders() map[string]Sender {
	m := make(map[string]Sender, len(c.Bots)+1)
	for name, s := range c.Bots {
		m[name] = s
	}
	if c.Sender != nil {
		m[keys.DefaultBot] = c.Sender
	}
	return m
}

// BotNames lists the bots the worker serves, sorted.
func (c Config) BotNames() []string {
	names := make([]string, 0, len(c.Bots)+1)
	for name := range c.senders() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// resolverOf returns the sender as a chatResolver when it is one.
func resolverOf(s Sender) chatResolver {
	r, _ := s.(chatResolver)
	return r
}
