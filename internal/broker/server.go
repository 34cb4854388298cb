package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Defaults of ServerConfig.
const (
	DefaultShutdownTimeout    = 25 * time.Second
	DefaultMaxIdle            = 10 * time.Second
	DefaultLeaseRecoveryAfter = 15 * time.Second
	defaultLeaseSweepInterval = 10 * time.Second
	// minLeaseRecoveryAfter is the shortest lease recovery: asynq extends a
	// live lease every 5 s, so a lease not extended for 10 s has missed two.
	minLeaseRecoveryAfter = 10 * time.Second
)

// ServerConfig configures the asynq server of one worker process and the
// helpers that run beside it.
type ServerConfig struct {
	// Queues maps each queue to its weight. Required.
	Queues map[string]int
	// StrictPriority empties higher-weighted queues first instead of
	// weighting.
	StrictPriority bool
	// Concurrency is how many tasks run at once. Required, at least 1.
	Concurrency int
	// ShutdownTimeout bounds how long running tasks may finish after Run's
	// context ends. Default 25s.
	ShutdownTimeout time.Duration
	// MaxIdle bounds how long an idle process waits between dequeue rounds
	// when no news arrives (Notify). Default 10s: every task Herald's own
	// producers, promoter, sweeper and asynq's forwarder make ready comes
	// with news, so this bounds only tasks made ready by others (the web
	// UI's "run", a plain asynq client), at about 10 commands a round.
	MaxIdle time.Duration
	// LeaseRecoveryAfter is how long a task's lease may go unextended before
	// the sweeper hands the task to another worker. Default 15s; between
	// minLeaseRecoveryAfter and LeaseDuration; negative turns the sweep off
	// and leaves recovery to asynq (60-90s).
	LeaseRecoveryAfter time.Duration
	// LeaseSweepInterval is how often the sweeper looks. Default 10s: a
	// dead worker's tasks move on LeaseRecoveryAfter plus at most this
	// after their last lease extension, for one ZCOUNT per queue a look.
	LeaseSweepInterval time.Duration
	// Groups configures group aggregation; off when Groups.Aggregate is nil.
	Groups GroupConfig
	// WakeList is the list the server's idle rounds wait on for producers'
	// tokens (NotifyList); default keys.WakeList(), the Telegram queues'.
	// A server whose queues other servers of the same fleet do not serve
	// needs a list of its own: a token is taken by one idle server only,
	// and one taken by a server that does not serve its queue wakes
	// nobody.
	WakeList string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OnLeaseRecovered and OnReclaimed are told how many tasks the sweeper
	// and the reclaimer moved (for metrics). Optional.
	OnLeaseRecovered func(queue string, n int)
	OnReclaimed      func(n int)
}

// GroupConfig is asynq's group aggregation and Herald's reclaimer of
// abandoned aggregation sets; the caller (the digest package) owns the
// defaults.
type GroupConfig struct {
	GracePeriod, MaxDelay time.Duration
	MaxSize               int
	// ReclaimAfter is how old an abandoned aggregation set must be before
	// its tasks go back to their group; below AggregationTimeout (the
	// digest package checks it). Zero: a quarter of AggregationTimeout.
	ReclaimAfter time.Duration
	// Aggregate turns a due group's tasks into one task.
	Aggregate func(group string, tasks []*asynq.Task) *asynq.Task
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c ServerConfig) WithDefaults() ServerConfig {
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.MaxIdle == 0 {
		c.MaxIdle = DefaultMaxIdle
	}
	if c.LeaseRecoveryAfter == 0 {
		c.LeaseRecoveryAfter = DefaultLeaseRecoveryAfter
	}
	if c.LeaseSweepInterval == 0 {
		c.LeaseSweepInterval = defaultLeaseSweepInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WakeList == "" {
		c.WakeList = keys.WakeList()
	}
	if c.OnLeaseRecovered == nil {
		c.OnLeaseRecovered = func(string, int) {}
	}
	if c.OnReclaimed == nil {
		c.OnReclaimed = func(int) {}
	}
	return c
}

// Validate names each field that is out of bounds and what to set.
func (c ServerConfig) Validate() error {
	var errs []error
	if len(c.Queues) == 0 {
		errs = append(errs, errors.New("Queues: name at least one queue with its weight"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("Concurrency must be at least 1, got %d", c.Concurrency))
	}
	if err := CheckLeaseRecovery(c.LeaseRecoveryAfter); err != nil {
		errs = append(errs, fmt.Errorf("LeaseRecoveryAfter %w", err))
	}
	return errors.Join(errs...)
}

// CheckLeaseRecovery says what is wrong with a lease recovery time d, as
// the end of a sentence that names the setting: it must be between
// minLeaseRecoveryAfter and below LeaseDuration, or negative (no sweep).
// Zero stands for the default and is accepted.
func CheckLeaseRecovery(d time.Duration) error {
	if d > 0 && (d < minLeaseRecoveryAfter || d >= leaseDuration) {
		return fmt.Errorf("must be between %s and %s (live workers extend leases every 5s; asynq's lease is %s), or -1s to turn the sweep off, got %s",
			config.FmtDur(minLeaseRecoveryAfter), config.FmtDur(leaseDuration-time.Second), config.FmtDur(leaseDuration), config.FmtDur(d))
	}
	return nil
}

// RecordWindow is how long a handler keeps retrying a write that must not
// be lost, such as the record of a send Telegram accepted: two of asynq's
// leases. A record not written is a message sent twice, since the task runs
// again. While Redis cannot be reached (a failover whose election was
// retried), no other worker can be handed the task either, and the write
// lands once there is a master again; giving up after the lease recovery
// time instead lost every record of the sends that were on the wire when
// the master died.
func (c ServerConfig) RecordWindow() time.Duration {
	return 2 * leaseDuration
}

// Server is one worker process's asynq server with Herald's helpers: the
// wake-up hook, the promoter that ends snoozes on time, the lease sweeper and
// the aggregation-set reclaimer.
type Server struct {
	cfg       ServerConfig
	rdb       redis.UniversalClient
	queues    []string
	waker     *Waker
	promoter  *promoter
	sweeper   *leaseSweeper // nil when the sweep is off
	reclaimer *reclaimer
	leases    *leaseWatch
	srv       *asynq.Server
	ready     atomic.Bool
}

// NewServer builds a Server on rdb, installing the wake-up hooks on it. The
// caller keeps rdb and closes it after Run returns.
func NewServer(rdb redis.UniversalClient, cfg ServerConfig) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, rdb: rdb}
	for q := range cfg.Queues {
		s.queues = append(s.queues, q)
	}
	sort.Strings(s.queues)
	s.waker = NewWaker(s.queues, cfg.MaxIdle, uuid.NewString())
	s.waker.list = cfg.WakeList
	rdb.AddHook(s.waker.Hook())
	rdb.AddHook(newSettleHook())
	rdb.AddHook(heartbeatHook())
	rdb.AddHook(doneHook())
	s.leases = newLeaseWatch(cfg.LeaseRecoveryAfter)
	rdb.AddHook(s.leases.hook())
	s.waker.SetClient(rdb)
	rdb.AddHook(newDigestWakeHook(s.notify))
	s.promoter = newPromoter(rdb, s.waker.WakeQueue, cfg.Logger)
	if cfg.LeaseRecoveryAfter > 0 {
		s.sweeper = newLeaseSweeper(rdb, s.queues, cfg.LeaseRecoveryAfter, cfg.LeaseSweepInterval,
			s.waker.WakeQueue, cfg.OnLeaseRecovered, cfg.Logger)
		s.sweeper.reach = newReach()
		rdb.AddHook(s.sweeper.reach.hook())
	}
	reclaimAfter := cfg.Groups.ReclaimAfter
	if reclaimAfter <= 0 {
		reclaimAfter = AggregationTimeout / 4
	}
	s.reclaimer = newReclaimer(rdb, s.queues, reclaimAfter, cfg.OnReclaimed, cfg.Logger)
	s.srv = asynq.NewServerFromRedisClient(rdb, s.asynqConfig())
	return s, nil
}

// How often asynq's forwarder and janitor look, and how many expired
// completed tasks the janitor deletes per queue and look. The forwarder is
// a backstop: the promoter moves Herald's snoozes and retries at their
// exact time, so it matters only for a process that died. janitorBatch per
// janitorInterval is 33 a second for each worker, above the 30 a second a
// bot can complete with idempotency keys even with a single worker.
const (
	forwardInterval = 20 * time.Second
	janitorInterval = 30 * time.Second
	janitorBatch    = 1000
)

// asynqConfig is how Herald runs asynq's server.
func (s *Server) asynqConfig() asynq.Config {
	c := asynq.Config{
		Concurrency:    s.cfg.Concurrency,
		Queues:         s.cfg.Queues,
		StrictPriority: s.cfg.StrictPriority,
		// Idle rounds are held by the wake hook, not by this sleep; a tiny
		// interval means a woken round starts at once.
		TaskCheckInterval: 100 * time.Microsecond,
		// The promoter ends snoozes at their exact time; asynq's forwarder
		// is the backstop for the tasks of a dead process and moves the
		// retries of failed sends, which wait 15 s or more anyway. Each look
		// costs two commands per queue and set.
		DelayedTaskCheckInterval: forwardInterval,
		// Completed tasks are kept only for an idempotency key's window;
		// their cleanup need not look every 8 s (asynq's default).
		JanitorInterval:  janitorInterval,
		JanitorBatchSize: janitorBatch,
		RetryDelayFunc:   retryDelay,
		IsFailure:        isFailure,
		ShutdownTimeout:  s.cfg.ShutdownTimeout,
		Logger:           asynqLogger{s.cfg.Logger},
		LogLevel:         asynq.WarnLevel,
	}
	if g := s.cfg.Groups; g.Aggregate != nil {
		c.GroupAggregator = asynq.GroupAggregatorFunc(g.Aggregate)
		c.GroupGracePeriod, c.GroupMaxDelay, c.GroupMaxSize = g.GracePeriod, g.MaxDelay, g.MaxSize
	}
	return c
}

// Queues returns the queue names, sorted.
func (s *Server) Queues() []string { return s.queues }

// Ready reports whether the server is taking tasks.
func (s *Server) Ready() bool { return s.ready.Load() }

// Run serves handlers, by task type, until ctx ends, then shuts down: it
// stops taking tasks, calls stopping (so handlers can hand back tasks that
// only wait), lets running tasks finish within ShutdownTimeout, and hands
// the snoozes it was to end over to the fleet.
func (s *Server) Run(ctx context.Context, handlers map[string]Handler, stopping func()) error {
	mux := asynq.NewServeMux()
	for typ, h := range handlers {
		mux.Handle(typ, s.wrap(h))
	}
	bg, stopBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(bg) }()
	}
	run(s.promoter.Run)
	if s.sweeper != nil {
		run(s.sweeper.Run)
	}
	// Aggregation sets abandoned while no worker ran go back to their groups
	// before asynq's recoverer (which runs at start) can reclaim them
	// without listing their groups again.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	s.reclaimer.Reclaim(rctx)
	cancel()
	run(s.reclaimer.Run)
	if err := s.srv.Start(mux); err != nil {
		stopBG()
		wg.Wait()
		return fmt.Errorf("start asynq server: %w", err)
	}
	s.ready.Store(true)
	<-ctx.Done()
	s.ready.Store(false)
	s.cfg.Logger.Info("worker shutting down", "timeout", s.cfg.ShutdownTimeout)
	s.waker.Close() // release a held dequeue round so the processor can stop at once
	s.srv.Stop()
	if stopping != nil {
		stopping()
	}
	s.srv.Shutdown() // running tasks finish; the promoter keeps running meanwhile
	stopBG()
	wg.Wait()
	// Snoozes this process was to end go back to their queues now, for the
	// rest of the fleet to wait on.
	hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n := s.promoter.HandOver(hctx, s.notify); n > 0 {
		s.cfg.Logger.Info("handed deferred tasks over to the fleet", "tasks", n)
	}
	return nil
}

// notify wakes one idle server of the fleet that waits on this server's
// wake list.
func (s *Server) notify(ctx context.Context, queue string) {
	_ = NotifyList(ctx, s.rdb, s.cfg.WakeList, queue)
}

// wrap adapts a Handler to asynq and has the promoter end its snoozes and
// retries at their exact time.
func (s *Server) wrap(h Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		task := taskOf(ctx, t)
		s.leases.start(task.ID)
		defer s.leases.done(task.ID)
		err := h.Handle(withLease(ctx, s.leases, task.ID), task)
		if d, ok := promoted(err); ok {
			s.promoter.PromoteAt(task.Queue, task.ID, time.Now().Add(d))
		}
		return err
	})
}

// asynqLogger routes asynq's log lines into slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Warn(args ...any) {
	msg := fmt.Sprint(args...)
	// asynq warns at every start when JanitorBatchSize is above its 100
	// ("Janitor batch size of 1000 is greater than the recommended batch
	// size of 100. This might cause a long-running script"). Herald's 1000
	// per 30 s is deliberate (see janitorBatch): fewer Redis commands, and
	// the script deletes only expired completed tasks, cheap per key. A
	// known choice is no warning, so that one line goes to Debug; any other
	// batch size, or any other warning, stays a WARN.
	if p := fmt.Sprintf("Janitor batch size of %d is greater than", janitorBatch); len(msg) >= len(p) && msg[:len(p)] == p {
		a.l.Debug(msg, "component", "asynq")
		return
	}
	a.l.Warn(msg, "component", "asynq")
}
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
	panic(fmt.Sprint(args...))
}
