package feeds

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
)

// defaults of Config.
const (
	DefaultConcurrency   = 4
	defaultMaxBodyBytes  = 10 << 20
	defaultMaxBackoff    = time.Hour
	defaultSeenLimit     = 1000
	defaultMaxNewPerPoll = 100
	defaultStateTTL      = 30 * 24 * time.Hour
)

// Config configures a poller.
type Config struct {
	// File is the parsed feeds.yaml (LoadConfig). Required: at least one
	// feed.
	File file
	// Redis keeps the seen items, the HTTP validators and the poll leases.
	// Required.
	Redis redis.UniversalClient
	// Dispatcher routes the alerts made from new items. Required.
	Dispatcher alerts.Dispatcher
	// HTTPClient fetches the feeds; default a client of its own. Its
	// Timeout should be zero or above every feed's timeout (each fetch is
	// bounded by the feed's timeout anyway). Redirects are limited to 5 and
	// to http/https unless the client sets its own CheckRedirect.
	HTTPClient *http.Client
	// Path is the feed list File was loaded from (HERALD_FEEDS_FILE); the
	// poller reads File only, Path is for the caller that loads it.
	Path string
	// Concurrency is the most fetches in progress at once
	// (HERALD_FEEDS_CONCURRENCY, default [DefaultConcurrency]).
	Concurrency int
	// MaxBodyBytes bounds a feed's body; default 10 MiB. A larger body is a
	// failed poll.
	MaxBodyBytes int64
	// MaxBackoff caps the wait after failures in a row (the wait starts at
	// the feed's interval and doubles); default 1h. A Retry-After answer may
	// ask for more (up to 24h).
	MaxBackoff time.Duration
	// SeenLimit is how many seen items are remembered per feed (at least as
	// many as the feed lists); default 1000.
	SeenLimit int
	// MaxNewPerPoll caps the alerts one poll sends; older new items beyond
	// it are recorded as seen and logged. Default 100.
	MaxNewPerPoll int
	// StateTTL is how long a feed's state stays in Redis after its last
	// poll; default 30 days. A feed removed from the file for longer starts
	// afresh (its next first poll sends nothing).
	StateTTL time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the poller's metrics; nil means none.
	Registerer prometheus.Registerer

	// clock is the time source; the wall clock when nil (tests set a fake).
	clock clock
	// polled, when set, is called by the scheduler after each poll (tests).
	polled func(p pollEvent)
}

// pollEvent describes one finished poll, for tests.
type pollEvent struct {
	feed    string
	outcome outcome
	started time.Time
	delay   time.Duration
}

// WithDefaults returns the config with zero fields set to their defaults
// and the file's defaults applied to its feeds.
func (c Config) WithDefaults() Config {
	c.File = c.File.WithDefaults()
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = defaultMaxBodyBytes
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = defaultMaxBackoff
	}
	if c.SeenLimit == 0 {
		c.SeenLimit = defaultSeenLimit
	}
	if c.MaxNewPerPoll == 0 {
		c.MaxNewPerPoll = defaultMaxNewPerPoll
	}
	if c.StateTTL == 0 {
		c.StateTTL = defaultStateTTL
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.clock == nil {
		c.clock = realClock{}
	}
	return c
}

// validate reports every unusable field but the file's (see file.Validate);
// it runs after WithDefaults.
func (c Config) validate() error {
	var p config.Problems
	c.Check(&p)
	errs := []error{p.Err()}
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("feeds: "+format, args...)) }
	if c.Redis == nil {
		bad("Config.Redis is required: the poller keeps seen items and leases in Redis")
	}
	if c.Dispatcher == nil {
		bad("Config.Dispatcher is required: it routes the alerts of new items")
	}
	if c.MaxBodyBytes < 1 {
		bad("Config.MaxBodyBytes is %d: use a positive size (default %d)", c.MaxBodyBytes, defaultMaxBodyBytes)
	}
	if c.MaxBackoff < 0 {
		bad("Config.MaxBackoff is %v: use a positive duration (default %v)", c.MaxBackoff, defaultMaxBackoff)
	}
	if c.SeenLimit < 1 {
		bad("Config.SeenLimit is %d: use at least 1 (default %d)", c.SeenLimit, defaultSeenLimit)
	}
	if c.MaxNewPerPoll < 1 {
		bad("Config.MaxNewPerPoll is %d: use at least 1 (default %d)", c.MaxNewPerPoll, defaultMaxNewPerPoll)
	}
	if c.StateTTL < time.Hour {
		bad("Config.StateTTL is %v: use at least 1h (default %v)", c.StateTTL, defaultStateTTL)
	}
	return errors.Join(errs...)
}

// poller polls the feeds of one file.
type poller struct {
	cfg     Config
	client  *http.Client
	ownHTTP *http.Transport // closed after Run when the poller made it
	store   *store
	metrics *metrics
	log     *slog.Logger
	// id prefixes this process's lease tokens; seq makes each unique.
	id      string
	seq     atomic.Uint64
	running atomic.Bool
}

// newFeedPoller validates cfg and returns a poller. It registers the metrics but does
// not touch the network; Run starts polling.
func newFeedPoller(cfg Config) (*poller, error) {
	// The file is checked before its defaults are spread over the feeds,
	// so that each problem is reported once, where it was written.
	fileErr := cfg.File.Validate()
	cfg = cfg.WithDefaults()
	if err := errors.Join(fileErr, cfg.validate()); err != nil {
		return nil, err
	}
	p := &poller{
		cfg:   cfg,
		store: &store{rdb: cfg.Redis, keep: cfg.SeenLimit, ttl: cfg.StateTTL},
		log:   cfg.Logger.With("component", "feeds"),
	}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		if c.CheckRedirect == nil {
			c.CheckRedirect = checkRedirect
		}
		p.client = &c
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 2
		tr.ResponseHeaderTimeout = maxTimeout
		p.ownHTTP = tr
		p.client = &http.Client{Transport: tr, CheckRedirect: checkRedirect}
	}
	m, err := newMetrics(cfg.Registerer, cfg.File.Feeds)
	if err != nil {
		return nil, fmt.Errorf("feeds: register metrics: %w", err)
	}
	p.metrics = m
	var b [8]byte
	_, _ = rand.Read(b[:])
	p.id = hex.EncodeToString(b[:])
	return p, nil
}

// Run builds a poller from cfg and runs it until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	p, err := newFeedPoller(cfg)
	if err != nil {
		return err
	}
	return p.Run(ctx)
}

// done is what a poll goroutine hands back to the scheduler.
type done struct {
	slot    *slot
	outcome outcome
	started time.Time
	delay   time.Duration
}

// Run polls the feeds until ctx ends, then cancels the polls in progress,
// waits for them and returns nil. Each feed is first polled at a point of
// its interval derived from its name, then every interval (longer after
// failures); at most Config.Concurrency polls run at once. Run may be
// called once.
func (p *poller) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("feeds: Poller.Run called twice")
	}
	if p.ownHTTP != nil {
		defer p.ownHTTP.CloseIdleConnections()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clk := p.cfg.clock
	start := clk.Now()
	queue := newAgenda(p.cfg.File.Feeds, start)
	p.log.Info("feed poller started", "feeds", queue.Len(), "concurrency", p.cfg.Concurrency)

	finished := make(chan done)
	inFlight := 0
	for {
		now := clk.Now()
		for inFlight < p.cfg.Concurrency && queue.Len() > 0 && !(*queue)[0].due.After(now) {
			s := heap.Pop(queue).(*slot)
			inFlight++
			go func() {
				out := p.poll(ctx, s.feed)
				d := p.account(s, out)
				p.releaseLease(ctx, s.feed, out, d)
				finished <- done{slot: s, outcome: out, started: now, delay: d}
			}()
		}
		var wake <-chan time.Time
		var t timer
		if inFlight < p.cfg.Concurrency && queue.Len() > 0 {
			t = clk.NewTimer((*queue)[0].due.Sub(now))
			wake = t.C()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			for ; inFlight > 0; inFlight-- {
				<-finished
			}
			p.log.Info("feed poller stopped")
			return nil
		case <-wake:
		case d := <-finished:
			if t != nil {
				t.Stop()
			}
			inFlight--
			d.slot.due = d.started.Add(d.delay)
			heap.Push(queue, d.slot)
			if p.cfg.polled != nil {
				p.cfg.polled(pollEvent{feed: d.slot.feed.Name, outcome: d.outcome, started: d.started, delay: d.delay})
			}
		}
	}
}

// account updates the slot's failure count and the metrics after a poll and
// returns the wait until the feed's next poll.
func (p *poller) account(s *slot, out outcome) time.Duration {
	name := s.feed.Name
	p.metrics.polls.WithLabelValues(name, string(out.result)).Inc()
	if out.sent > 0 {
		p.metrics.itemsNew.WithLabelValues(name).Add(float64(out.sent))
	}
	for reason, n := range out.skipped {
		p.metrics.skipped.WithLabelValues(name, reason).Add(float64(n))
	}
	delay := s.feed.Interval
	switch {
	case out.result.failed():
		s.failures++
		delay = backoff(s.feed.Interval, p.cfg.MaxBackoff, s.failures)
		delay = max(delay, out.retryAfter)
		p.log.Warn("feed poll failed", "feed", name, "result", string(out.result), "error", out.err,
			"failures_in_a_row", s.failures, "next_poll_in", delay.Round(time.Second).String())
	case out.result == resultLeased:
		// Another replica polls the feed; keep our own schedule.
	default:
		if s.failures > 0 {
			p.log.Info("feed recovered", "feed", name, "after_failures", s.failures)
		}
		s.failures = 0
		p.metrics.lastSuccess.WithLabelValues(name).Set(float64(p.cfg.clock.Now().Unix()))
	}
	p.metrics.failures.WithLabelValues(name).Set(float64(s.failures))
	return delay
}

// releaseLease gives up the feed's lease after a poll, keeping it for half
// the wait until the next poll: a replica on the same schedule then finds it
// taken instead of fetching the feed again right after this one.
func (p *poller) releaseLease(ctx context.Context, fd feed, out outcome, next time.Duration) {
	if out.token == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := p.store.release(ctx, fd.Name, out.token, next/2); err != nil {
		p.log.Warn("feed lease not released; it expires by itself", "feed", fd.Name, "error", err)
	}
}

// owner prefixes every lease token of this poller.
func (p *poller) owner() string { return p.id + "-" }

// token returns a lease token unique to this poll.
func (p *poller) token() string {
	return fmt.Sprintf("%s%d", p.owner(), p.seq.Add(1))
}
