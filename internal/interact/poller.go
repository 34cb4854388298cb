package interact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/backoff"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// Defaults of pollerConfig.
const (
	// defaultLeaseTTL is how long a bot's updates lease lasts unless its
	// holder renews it (every third of it): about the longest a dead
	// holder keeps the fleet from polling. Telegram takes a press's
	// answer for some 15 s, so the hand-over must be far shorter.
	defaultLeaseTTL = 3 * time.Second
	// defaultAcquireEvery is the longest a process that does not hold a
	// bot's lease waits between tries to take it. It also tries as soon as
	// the lease it saw would run out, so that a dead holder is replaced
	// within about LeaseTTL whatever this is; this bounds the hand-over
	// after a holder's shutdown and the Redis commands of standbys.
	defaultAcquireEvery = 2 * time.Second
	// defaultPollTimeout caps the long poll's wait for an update. Each
	// poll is cut further to end before the holder's lease could run out
	// (see poller), so in practice it lasts a second or two.
	defaultPollTimeout = 30 * time.Second
	// defaultErrorDelay is the first wait after a failed round; it doubles
	// up to defaultErrorDelayCap while the failures last.
	defaultErrorDelay    = 2 * time.Second
	defaultErrorDelayCap = time.Minute
	// defaultOffsetRetention is how long the stored offset outlives the
	// last update. Telegram forgets unconfirmed updates after a day, and
	// after a week without updates may restart update ids from a random
	// number: an offset older than that must not hide the new ones.
	defaultOffsetRetention = 24 * time.Hour
)

// pollerConfig configures a poller.
type pollerConfig struct {
	// Redis holds the leases and offsets. Required.
	Redis redis.UniversalClient
	// Bots are the bots to poll, by name. Required.
	Bots map[string]bot
	// Tasks queues the updates. Required.
	Tasks *tasks
	// Owner names this process in the leases; default host name, process
	// id and a random suffix.
	Owner string
	// LeaseTTL, AcquireEvery and PollTimeout: see their defaults
	// (defaultLeaseTTL, defaultAcquireEvery, defaultPollTimeout). The
	// holder renews its lease every LeaseTTL/3; a lease under a few
	// seconds leaves no room for a long poll, and the holder short polls
	// once per renewal instead.
	LeaseTTL     time.Duration
	AcquireEvery time.Duration
	PollTimeout  time.Duration
	// ErrorDelay and ErrorDelayCap shape the waits after failed rounds
	// (defaults defaultErrorDelay and defaultErrorDelayCap).
	ErrorDelay, ErrorDelayCap time.Duration
	// OffsetRetention is how long the stored offset outlives the last
	// update (default defaultOffsetRetention).
	OffsetRetention time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics count errors and show which bots this process polls; nil:
	// unregistered ones.
	Metrics *metrics
}

// withDefaults fills the zero fields.
func (c pollerConfig) withDefaults() pollerConfig {
	if c.Owner == "" {
		host, _ := os.Hostname()
		c.Owner = host + "-" + strconv.Itoa(os.Getpid()) + "-" + uuid.NewString()[:8]
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = defaultLeaseTTL
	}
	if c.AcquireEvery == 0 {
		c.AcquireEvery = defaultAcquireEvery
	}
	if c.PollTimeout == 0 {
		c.PollTimeout = defaultPollTimeout
	}
	if c.ErrorDelay == 0 {
		c.ErrorDelay = defaultErrorDelay
	}
	if c.ErrorDelayCap == 0 {
		c.ErrorDelayCap = defaultErrorDelayCap
	}
	if c.OffsetRetention == 0 {
		c.OffsetRetention = defaultOffsetRetention
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Metrics = c.Metrics.orNew()
	return c
}

// minLeaseTTL is the shortest lease accepted: renewals every third of it
// must not crowd Redis.
const minLeaseTTL = 300 * time.Millisecond

func (c pollerConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("interact: "+format, args...)) }
	if c.Redis == nil {
		bad("PollerConfig.Redis is required")
	}
	if len(c.Bots) == 0 {
		bad("PollerConfig.Bots is required: the Bot API client of each bot to poll")
	}
	for name, b := range c.Bots {
		if b == nil || !keys.ValidBotName(name) {
			bad("PollerConfig.Bots[%q] is nil or not a bot name", name)
		}
	}
	if c.Tasks == nil {
		bad("PollerConfig.Tasks is required: it queues the updates")
	}
	if c.LeaseTTL < minLeaseTTL {
		bad("PollerConfig.LeaseTTL is %v; use at least %v (default %v)", c.LeaseTTL, minLeaseTTL, defaultLeaseTTL)
	}
	if c.AcquireEvery <= 0 {
		bad("PollerConfig.AcquireEvery is %v; use a positive duration (default %v)", c.AcquireEvery, defaultAcquireEvery)
	}
	if c.PollTimeout < 0 {
		bad("PollerConfig.PollTimeout is %v; use 0 or more (default %v)", c.PollTimeout, defaultPollTimeout)
	}
	if c.ErrorDelay <= 0 || c.ErrorDelayCap < c.ErrorDelay {
		bad("PollerConfig.ErrorDelay (%v) must be positive and at most ErrorDelayCap (%v)", c.ErrorDelay, c.ErrorDelayCap)
	}
	if c.OffsetRetention < time.Minute {
		bad("PollerConfig.OffsetRetention is %v; use at least 1m (default %v)", c.OffsetRetention, defaultOffsetRetention)
	}
	return errors.Join(errs...)
}

// poller long-polls the updates of its bots, each bot from exactly one
// process of the fleet at a time: the holder of the bot's lease. It hands
// every update to the queue before it moves the bot's stored offset past
// it, so that a holder that stops or dies loses nothing and its successor
// neither skips nor repeats updates. A holder's getUpdates always ends
// before its lease could run out, so two holders' polls never overlap
// (Telegram would end one with 409 Conflict).
type poller struct {
	cfg pollerConfig
	log *slog.Logger

	loops background.Group
}

// newPoller checks cfg and returns a poller; Start runs it.
func newPoller(cfg pollerConfig) (*poller, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &poller{cfg: cfg, log: cfg.Logger.With("component", "updates_poller")}, nil
}

// Owner is the name this process holds leases under.
func (p *poller) Owner() string { return p.cfg.Owner }

// Start runs one loop per bot until ctx ends or Shutdown. It returns at
// once; calling it twice is an error.
func (p *poller) Start(ctx context.Context) error {
	loops := make([]func(context.Context), 0, len(p.cfg.Bots))
	for name, bot := range p.cfg.Bots {
		loops = append(loops, func(ctx context.Context) { p.run(ctx, name, bot) })
	}
	if err := p.loops.Start(ctx, loops...); err != nil {
		return fmt.Errorf("interact: Poller %w", err)
	}
	return nil
}

// Shutdown stops polling, hands the leases back (so another process takes
// over at once) and waits for the loops to end.
func (p *poller) Shutdown() { p.loops.Shutdown() }

// run takes the bot's lease whenever it is free and polls while it holds
// it. A process that finds another holder tries again when that lease
// would run out, or after AcquireEvery if sooner.
func (p *poller) run(ctx context.Context, name string, bot bot) {
	p.cfg.Metrics.Polling.WithLabelValues(name).Set(0)
	log := p.log.With("bot", name)
	sp := keys.Bot(name)
	for ctx.Err() == nil {
		took := time.Now()
		left, err := takeLeaseScript.Run(ctx, p.cfg.Redis, []string{sp.UpdatesLease()}, p.cfg.Owner, p.cfg.LeaseTTL.Milliseconds()).Int64()
		wait := p.cfg.AcquireEvery
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("could not take the updates lease", "error", err)
			}
		case left == 0:
			log.Info("polling the bot's updates (this process holds its lease)")
			p.cfg.Metrics.Polling.WithLabelValues(name).Set(1)
			p.hold(ctx, log, name, bot, took)
			p.cfg.Metrics.Polling.WithLabelValues(name).Set(0)
			p.release(log, sp)
			continue
		default:
			wait = min(wait, time.Duration(left)*time.Millisecond+acquireSlack)
		}
		sleep(ctx, wait)
	}
}

// acquireSlack is how long after the lease it saw would run out a
// process tries to take it.
const acquireSlack = 20 * time.Millisecond

// release hands the lease back, on a context of its own: the poller's has
// ended.
func (p *poller) release(log *slog.Logger, sp keys.Space) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := releaseLeaseScript.Run(ctx, p.cfg.Redis, []string{sp.UpdatesLease()}, p.cfg.Owner).Err(); err != nil {
		log.Warn("could not hand the updates lease back; another process takes over when it expires", "error", err,
			"expires_in", p.cfg.LeaseTTL)
		return
	}
	log.Info("stopped polling the bot's updates; lease handed back")
}

// lease is what a holder knows of its lease: the time until which it
// surely holds it (the start of the last renewal that succeeded, plus the
// time to live), and a signal after each renewal.
type lease struct {
	mu      sync.Mutex
	until   time.Time
	renewed chan struct{}
}

func newLease(until time.Time) *lease {
	return &lease{until: until, renewed: make(chan struct{}, 1)}
}

func (l *lease) extend(until time.Time) {
	l.mu.Lock()
	l.until = until
	l.mu.Unlock()
	select {
	case l.renewed <- struct{}{}:
	default:
	}
}

func (l *lease) held() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// wait returns after the next renewal, after d, or when ctx ends.
func (l *lease) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.renewed:
	case <-t.C:
	case <-ctx.Done():
	}
}

// hold polls while the lease, taken at took, is this process's: renew
// extends it and ends the polling once it is lost. The offset is read from
// Redis once, then kept here: only the holder moves it.
func (p *poller) hold(ctx context.Context, log *slog.Logger, name string, bot bot, took time.Time) {
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	l := newLease(took.Add(p.cfg.LeaseTTL))
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		p.renew(ctx, log, keys.Bot(name), l, lost)
	}()
	defer func() { <-renewed }()

	offset := int64(-1) // not read yet
	failures := 0
	for ctx.Err() == nil {
		ok, wait := p.round(ctx, log, name, bot, l, &offset, lost)
		if ok {
			failures = 0
			continue
		}
		failures++
		sleep(ctx, max(wait, p.delay(failures)))
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		log.Warn("stopped polling the bot's updates", "reason", cause)
	}
}

// renew extends the lease every third of its time to live until ctx ends,
// and calls lost when another process holds it or when it could not be
// extended before it ran out.
func (p *poller) renew(ctx context.Context, log *slog.Logger, sp keys.Space, l *lease, lost context.CancelCauseFunc) {
	t := time.NewTicker(p.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		n, err := renewLeaseScript.Run(ctx, p.cfg.Redis, []string{sp.UpdatesLease()}, p.cfg.Owner, p.cfg.LeaseTTL.Milliseconds()).Int()
		switch {
		case err == nil && n == 1:
			l.extend(start.Add(p.cfg.LeaseTTL))
		case err == nil:
			lost(errors.New("another process holds the lease"))
			return
		case ctx.Err() != nil:
			return
		case !time.Now().Before(l.held()):
			lost(fmt.Errorf("the lease could not be renewed before it expired: %w", err))
			return
		default:
			log.Warn("could not renew the updates lease; trying again", "error", err)
		}
	}
}

// pollSlack is the time left for getUpdates's answer to come back after
// Telegram's long poll ends.
const pollSlack = 250 * time.Millisecond

// budget is the next getUpdates's long poll timeout (whole seconds, as
// Telegram takes it; 0 for a short poll) and the deadline by which the
// call must have ended: a sixth of the lease before it could run out.
// ok is false when that deadline has passed (the renewal is late).
func (p *poller) budget(l *lease) (timeout time.Duration, deadline time.Time, ok bool) {
	deadline = l.held().Add(-p.cfg.LeaseTTL / 6)
	left := time.Until(deadline)
	if left <= 0 {
		return 0, deadline, false
	}
	return max(min(p.cfg.PollTimeout, (left-pollSlack).Truncate(time.Second)), 0), deadline, true
}

// round is one getUpdates call and the hand-over of what it returned. It
// reports false after a failure (the caller waits before the next round,
// at least wait: a 429's retry_after), and calls lost when it finds the
// lease gone. offset is the holder's copy of the stored offset, -1 until
// read.
func (p *poller) round(ctx context.Context, log *slog.Logger, name string, bot bot, l *lease, offset *int64,
	lost context.CancelCauseFunc) (ok bool, wait time.Duration) {
	sp := keys.Bot(name)
	if *offset < 0 {
		o, err := p.cfg.Redis.Get(ctx, sp.UpdatesOffset()).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			if ctx.Err() == nil {
				p.cfg.Metrics.PollErrors.WithLabelValues(name, "redis").Inc()
				log.Warn("could not read the updates offset", "error", err)
			}
			return false, 0
		}
		*offset = o
	}
	timeout, deadline, ok := p.budget(l)
	if !ok {
		l.wait(ctx, p.cfg.LeaseTTL/3)
		return true, 0
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	ups, err := bot.GetUpdates(pctx, *offset, timeout)
	cancel()
	switch {
	case err != nil && pctx.Err() != nil:
		// Stopped, or cut to end within the lease: not a failure.
		return true, 0
	case err != nil:
		return false, p.pollFailed(log, name, err)
	case len(ups) == 0 && timeout == 0:
		// A lease too short for a long poll: one short poll per renewal.
		l.wait(ctx, p.cfg.LeaseTTL/3)
	}
	for _, u := range ups {
		if _, err := p.cfg.Tasks.Enqueue(ctx, name, viaPoll, u); err != nil {
			// Not confirmed: the next getUpdates from the stored offset
			// returns it again.
			if ctx.Err() == nil {
				p.cfg.Metrics.PollErrors.WithLabelValues(name, "redis").Inc()
				log.Warn("could not queue an update; it will be fetched again", "update_id", u.UpdateID, "error", err)
			}
			return false, 0
		}
		n, err := advanceScript.Run(ctx, p.cfg.Redis, []string{sp.UpdatesLease(), sp.UpdatesOffset()},
			p.cfg.Owner, u.UpdateID+1, p.cfg.OffsetRetention.Milliseconds()).Int64()
		switch {
		case err != nil:
			if ctx.Err() == nil {
				p.cfg.Metrics.PollErrors.WithLabelValues(name, "redis").Inc()
				log.Warn("could not store the updates offset; the update may be fetched again (it is queued once)", "update_id", u.UpdateID, "error", err)
			}
			return false, 0
		case n < 0:
			// The lease went to another process: it continues from the
			// offset stored so far.
			lost(errors.New("another process holds the lease"))
			return false, 0
		}
		*offset = n
		log.Debug("update queued", "update_id", u.UpdateID)
	}
	return true, 0
}

// pollFailed logs a failed getUpdates, naming the fix for the failures an
// operator must act on, and returns the wait Telegram asked for (429).
func (p *poller) pollFailed(log *slog.Logger, name string, err error) time.Duration {
	te, _ := telegram.AsError(err)
	switch {
	case te != nil && te.RetryAfter > 0:
		p.cfg.Metrics.PollErrors.WithLabelValues(name, "telegram").Inc()
		log.Warn("getUpdates rate limited; waiting as Telegram asks", "retry_after", te.RetryAfter)
		return te.RetryAfter
	case te != nil && te.Code == 409 && strings.Contains(strings.ToLower(te.Description), "webhook"):
		p.cfg.Metrics.PollErrors.WithLabelValues(name, "webhook_set").Inc()
		log.Error("getUpdates refused: the bot has a webhook set, so Herald cannot poll its button presses; "+
			"set HERALD_TELEGRAM_WEBHOOK_URL to receive them by webhook, or delete the webhook (deleteWebhook)", "error", err)
	case te != nil && te.Code == 409:
		p.cfg.Metrics.PollErrors.WithLabelValues(name, "conflict").Inc()
		log.Warn("getUpdates conflict: another getUpdates request for this bot is running; if this lasts, "+
			"another program (or a Herald fleet on another Redis) uses the bot's token", "error", err)
	default:
		p.cfg.Metrics.PollErrors.WithLabelValues(name, "telegram").Inc()
		log.Warn("getUpdates failed; trying again", "error", err)
	}
	return 0
}

// delay is the wait after n failed rounds in a row.
func (p *poller) delay(n int) time.Duration {
	return backoff.Exp(p.cfg.ErrorDelay, p.cfg.ErrorDelayCap, n-1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
