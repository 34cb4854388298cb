package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// Config configures a worker process.
type Config struct {
	// Redis is the connection; the worker builds its own client from it so it
	// can install the wake hook. Required.
	Redis *redis.UniversalOptions
	// Sender delivers messages. Required.
	Sender Sender
	// Limits are the fleet-wide rate limits (see ratelimit.Config defaults).
	Limits ratelimit.Config
	// Queues maps queue names to weights; default critical=6, default=3, low=1.
	Queues map[string]int
	// StrictPriority empties higher queues first instead of weighting.
	StrictPriority bool
	// Concurrency is the number of tasks handled at once; default 64.
	Concurrency int
	// Waiters is how many more tasks may wait for their send slot in this
	// process, for up to WaitLong, instead of going back to Redis until the
	// slot comes (a round trip through asynq's retry set and a second
	// dequeue). Each waiter is a sleeping goroutine. Default 256; negative:
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
	// SentRetention is how long "already sent" records are kept; default 7 days.
	SentRetention time.Duration
	// MaxIdle bounds how long an idle worker waits between dequeue rounds;
	// default 2s. New messages wake it at once; MaxIdle only matters for
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
	// default 2s.
	LeaseSweepInterval time.Duration
	// Digest configures per-destination digests: the grouping settings of
	// the asynq server, the digest handler and the aggregation-set
	// reclaimer (see digest.Config for the defaults).
	Digest digest.Config
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the worker's metrics; nil means none.
	Registerer prometheus.Registerer
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if len(c.Queues) == 0 {
		c.Queues = map[string]int{jobs.QueueCritical: 6, jobs.QueueDefault: 3, jobs.QueueLow: 1}
	}
	if c.Waiters == 0 {
		c.Waiters = 256
	}
	if c.Waiters < 0 {
		c.Waiters = 0
	}
	if c.WaitLong == 0 {
		c.WaitLong = 2 * time.Minute
	}
	if c.Concurrency == 0 {
		c.Concurrency = 64
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 25 * time.Second
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = 2 * time.Second
	}
	if c.RetryAfterUnit <= 0 {
		c.RetryAfterUnit = time.Second
	}
	if c.BackoffCap == 0 {
		c.BackoffCap = 10 * time.Minute
	}
	if c.SentRetention == 0 {
		c.SentRetention = 7 * 24 * time.Hour
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = 2 * time.Second
	}
	if c.LeaseRecoveryAfter == 0 {
		c.LeaseRecoveryAfter = 15 * time.Second
	}
	if c.LeaseSweepInterval == 0 {
		c.LeaseSweepInterval = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Limits = c.Limits.WithDefaults()
	c.Digest = c.Digest.WithDefaults()
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Redis == nil {
		errs = append(errs, errors.New("worker: Config.Redis is required"))
	}
	if c.Sender == nil {
		errs = append(errs, errors.New("worker: Config.Sender is required"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("worker: Config.Concurrency must be >= 1, got %d", c.Concurrency))
	}
	if c.LeaseRecoveryAfter > 0 && (c.LeaseRecoveryAfter < 10*time.Second || c.LeaseRecoveryAfter >= broker.LeaseDuration) {
		errs = append(errs, fmt.Errorf("worker: Config.LeaseRecoveryAfter must be between 10s and 30s (or negative to disable), got %v", c.LeaseRecoveryAfter))
	}
	if c.BackoffBase > c.BackoffCap {
		errs = append(errs, fmt.Errorf("worker: Config.BackoffBase (%v) must not exceed BackoffCap (%v)", c.BackoffBase, c.BackoffCap))
	}
	if err := c.Digest.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("worker: Config.Digest: %w", err))
	}
	return errors.Join(errs...)
}

// Worker is one worker process's asynq server plus Herald's helpers.
type Worker struct {
	cfg      Config
	rdb      redis.UniversalClient
	waker    *broker.Waker
	promoter *broker.Promoter
	sweeper  *broker.LeaseSweeper
	// reclaimer returns abandoned aggregation sets to their groups.
	reclaimer *broker.Reclaimer
	digests   digestTasks
	handler   *Handler
	srv       *asynq.Server
	ready     atomic.Bool
	Metrics   *Metrics
}

// New builds a Worker; Run starts it.
func New(cfg Config) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	queues := make([]string, 0, len(cfg.Queues))
	for q := range cfg.Queues {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	rdb := redis.NewUniversalClient(cfg.Redis)
	waker := broker.NewWaker(queues, cfg.MaxIdle, uuid.NewString())
	rdb.AddHook(waker.Hook())
	waker.SetClient(rdb)
	rdb.AddHook(broker.DigestWakeHook(func(ctx context.Context, q string) { _ = broker.Notify(ctx, rdb, q) }))
	lim, err := ratelimit.New(rdb, cfg.Limits)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	metrics := NewMetrics(cfg.Registerer)
	prom := broker.NewPromoter(rdb, waker.WakeQueue, cfg.Logger)
	h := &Handler{
		rdb: rdb, sender: cfg.Sender, resolver: resolverOf(cfg.Sender), limiter: lim, promoter: prom, metrics: metrics, log: cfg.Logger,
		backoffBase: cfg.BackoffBase, backoffCap: cfg.BackoffCap, sentRetention: cfg.SentRetention,
		retryAfterUnit: cfg.RetryAfterUnit,
		recordWindow:   recordWindow(cfg.LeaseRecoveryAfter),
		waiters:        make(chan struct{}, cfg.Waiters), waitLong: cfg.WaitLong, stopping: make(chan struct{}),
	}
	// Digests hand their messages to the ordinary send path through an
	// Enqueuer of the worker's own; a digest message's markup can be long
	// (links), its visible text is within Telegram's limit.
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Queues: queues, DefaultQueue: queues[0], Limits: jobs.Limits{MaxTextLen: 1 << 20}})
	dg, err := digest.New(rdb, enq, cfg.Digest)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		// Waiters sleep in handlers too, beside the senders.
		Concurrency:    cfg.Concurrency + cfg.Waiters,
		Queues:         cfg.Queues,
		StrictPriority: cfg.StrictPriority,
		// Idle rounds are held by the wake hook, not by this sleep; a tiny
		// interval means a woken round starts at once.
		TaskCheckInterval: 100 * time.Microsecond,
		// Herald promotes deferred tasks itself at their exact time; asynq's
		// forwarder is the backstop for tasks of a dead process.
		DelayedTaskCheckInterval: 5 * time.Second,
		RetryDelayFunc:           retryDelay,
		IsFailure:                isFailure,
		ShutdownTimeout:          cfg.ShutdownTimeout,
		Logger:                   asynqLogger{cfg.Logger},
		LogLevel:                 asynq.WarnLevel,
		// Coalescible messages wait in a group per destination; asynq's
		// aggregator turns a due group into one digest task.
		GroupAggregator:  asynq.GroupAggregatorFunc(digest.Aggregate),
		GroupGracePeriod: cfg.Digest.GracePeriod,
		GroupMaxDelay:    cfg.Digest.MaxDelay,
		GroupMaxSize:     cfg.Digest.MaxSize,
	})
	w := &Worker{cfg: cfg, rdb: rdb, waker: waker, promoter: prom, handler: h, srv: srv, Metrics: metrics,
		digests:   digestTasks{h: h, d: dg},
		reclaimer: broker.NewReclaimer(rdb, queues, cfg.Digest.ReclaimAfter, func(n int) { metrics.DigestReclaimed.Add(float64(n)) }, cfg.Logger),
	}
	if cfg.LeaseRecoveryAfter > 0 {
		w.sweeper = broker.NewLeaseSweeper(rdb, queues, cfg.LeaseRecoveryAfter, cfg.LeaseSweepInterval,
			waker.WakeQueue, metrics.leaseRecovered, cfg.Logger)
	}
	return w, nil
}

// Handler returns the task handler (for tests and custom muxes).
func (w *Worker) Handler() *Handler { return w.handler }

// Ping checks Redis (readiness).
func (w *Worker) Ping(ctx context.Context) error { return w.rdb.Ping(ctx).Err() }

// Run serves until ctx is done, then shuts down gracefully: it stops taking
// tasks, lets in-flight sends finish within ShutdownTimeout, and hands
// unfinished ones back to Redis.
func (w *Worker) Run(ctx context.Context) error {
	mux := asynq.NewServeMux()
	mux.Handle(jobs.TypeSendMessage, w.handler)
	mux.Handle(digest.TypeDigest, w.digests)
	mux.Handle(jobs.TypeDigestItem, w.digests)
	bg, stopBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.promoter.Run(bg) }()
	if w.sweeper != nil {
		wg.Add(1)
		go func() { defer wg.Done(); w.sweeper.Run(bg) }()
	}
	// Aggregation sets abandoned while no worker ran go back to their groups
	// before asynq's recoverer (which runs at start) can reclaim them
	// without listing their groups again.
	rctx, cancelReclaim := context.WithTimeout(ctx, 5*time.Second)
	w.reclaimer.Reclaim(rctx)
	cancelReclaim()
	wg.Add(1)
	go func() { defer wg.Done(); w.reclaimer.Run(bg) }()
	if err := w.srv.Start(mux); err != nil {
		stopBG()
		wg.Wait()
		w.rdb.Close()
		return fmt.Errorf("worker: start: %w", err)
	}
	w.ready.Store(true)
	<-ctx.Done()
	w.ready.Store(false)
	w.cfg.Logger.Info("worker shutting down", "timeout", w.cfg.ShutdownTimeout)
	w.waker.Close() // release a held dequeue round so the processor can stop at once
	w.srv.Stop()
	close(w.handler.stopping) // waiters hand their tasks back at once
	w.srv.Shutdown()          // in-flight sends finish; the promoter keeps running meanwhile
	stopBG()
	wg.Wait()
	// Deferred tasks whose promotion this process was to make go back to
	// their queues now, for the rest of the fleet to wait on.
	hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if n := w.promoter.HandOver(hctx, func(ctx context.Context, q string) { _ = broker.Notify(ctx, w.rdb, q) }); n > 0 {
		w.cfg.Logger.Info("handed deferred tasks over to the fleet", "tasks", n)
	}
	cancel()
	return w.rdb.Close()
}

// HTTPHandler serves /livez, /readyz and, when metrics is non-nil, /metrics.
func (w *Worker) HTTPHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if !w.ready.Load() {
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

// ListenAndServe serves h on addr until ctx ends, with the timeouts every
// Herald server has (httpapi.NewServer).
func ListenAndServe(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	return httpapi.ListenAndServe(ctx, addr, h, log)
}

// asynqLogger routes asynq's log lines into slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
	panic(fmt.Sprint(args...))
}

// resolverOf returns the sender as a ChatResolver when it is one.
func resolverOf(s Sender) ChatResolver {
	r, _ := s.(ChatResolver)
	return r
}

// recordWindow is how long a worker keeps trying to record a send that
// Telegram accepted: until the task could be handed to another worker.
func recordWindow(leaseRecovery time.Duration) time.Duration {
	if leaseRecovery > 0 {
		return leaseRecovery
	}
	return broker.LeaseDuration / 2
}
