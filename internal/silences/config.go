package silences

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
)

// Defaults of Config, named once so that WithDefaults, the errors that
// suggest them and the documentation say the same.
const (
	defaultCacheTTL          = time.Second
	defaultStaleFor          = 30 * time.Second
	defaultRetention         = 7 * 24 * time.Hour
	defaultMaxSilences       = 1000
	defaultMaxExpired        = 1000
	defaultMaxMatcherProgram = 256
	defaultMaxSilenceProgram = 256
	defaultMaxLiveProgram    = 1024
	defaultMaxDuration       = 366 * 24 * time.Hour
	defaultMaxRecorded       = 10000
	defaultReleaseInterval   = time.Second
	defaultReleaseLease      = 30 * time.Second
	defaultReleaseBatch      = 100
	defaultCollectInterval   = time.Minute
	defaultMaxBodyBytes      = 64 << 10
	defaultListLimit         = 100
	maxListLimit             = 1000
	minCacheTTL              = 10 * time.Millisecond
	minReleaseInterval       = 10 * time.Millisecond
	maxReleaseBatch          = 10000
	minRetention             = time.Minute
	minReleaseLeaseIntervals = 2
	minMatcherProgram        = 16
)

// itemEnqueuer puts a digest item into its destination's group; it is
// *jobs.Enqueuer's EnqueueItem.
type itemEnqueuer interface {
	EnqueueItem(ctx context.Context, queue string, it jobs.CoalescedItem) (jobs.Result, error)
}

// Config configures a Store. The zero value of each optional field means
// its default.
type Config struct {
	// Redis holds the silences, the record of silenced alerts and the held
	// messages. Required.
	Redis redis.UniversalClient
	// Items receives the held messages when their quiet hours end.
	// Required: pass the producer's *jobs.Enqueuer.
	Items itemEnqueuer
	// CacheTTL is how long a process uses the silences it read from Redis
	// before reading them again: the bound within which a silence created
	// or expired through another producer takes effect here. Default 1s.
	CacheTTL time.Duration
	// StaleFor is how long the silences last read stay in use while Redis
	// cannot be read; after that a dispatch fails (503, the sender
	// retries). Default 30s.
	StaleFor time.Duration
	// Retention is how long an expired silence is kept (listed with
	// ?state=expired, its caught alerts listed) before it is removed.
	// Default 7 days.
	Retention time.Duration
	// MaxSilences bounds the silences in force or still to come; creating
	// one more is refused with 409. Default 1000.
	MaxSilences int
	// MaxExpired bounds the expired silences kept (for ?state=expired and
	// their caught alerts): beyond it the oldest are removed, whenever a
	// silence is created or expired and in Start's pass. Default 1000.
	MaxExpired int
	// MaxMatcherProgram bounds the size of one regular expression matcher:
	// the instructions of the RE2 program its anchored value compiles to.
	// Matching an alert takes time in proportion to it (see docs/SILENCES.md
	// for the figures). Default 256.
	MaxMatcherProgram int
	// MaxSilenceProgram bounds the instructions of one silence's regular
	// expressions together. Default 256.
	MaxSilenceProgram int
	// MaxLiveProgram bounds the instructions of the regular expressions of
	// all the silences in force or to come, across the fleet: the cost of
	// matching one alert. A silence that would pass it is refused when it
	// is created. Default 1024.
	MaxLiveProgram int
	// MaxDuration bounds how long one silence may last. Default 366 days.
	MaxDuration time.Duration
	// MaxRecorded caps the stream of silenced alerts (approximately, as
	// Redis trims streams). Default 10000.
	MaxRecorded int64
	// ReleaseInterval is the resolution of Start's loop: it releases held
	// messages within one interval of their time. It asks Redis only when
	// a message it knows of is due, and every 30 intervals for messages
	// that other producers held. Default 1s.
	ReleaseInterval time.Duration
	// ReleaseLease is how long a releaser owns the held messages it took;
	// one that dies leaves them to another releaser after it. Default 30s.
	ReleaseLease time.Duration
	// ReleaseBatch is the most held messages one release script takes.
	// Default 100.
	ReleaseBatch int
	// CollectInterval is how often Start's loop removes the silences
	// expired for longer than Retention. Default 1m.
	CollectInterval time.Duration
	// IdempotencyWindow is how long the idempotency key of a held message
	// is claimed, as the Enqueuer claims keys. Default
	// jobs.DefaultIdempotencyWindow; pass the producer's setting.
	IdempotencyWindow time.Duration
	// MaxRetry is the retry budget given to held messages that name none,
	// as the Enqueuer gives it. Default jobs.DefaultMaxRetry; pass the
	// producer's setting.
	MaxRetry int
	// MaxBodyBytes bounds a request body of the API. Default 64 KiB.
	MaxBodyBytes int64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock of silences and quiet hours; default time.Now.
	Now func() time.Time
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.CacheTTL == 0 {
		c.CacheTTL = defaultCacheTTL
	}
	if c.StaleFor == 0 {
		c.StaleFor = defaultStaleFor
	}
	if c.Retention == 0 {
		c.Retention = defaultRetention
	}
	if c.MaxSilences == 0 {
		c.MaxSilences = defaultMaxSilences
	}
	if c.MaxExpired == 0 {
		c.MaxExpired = defaultMaxExpired
	}
	if c.MaxMatcherProgram == 0 {
		c.MaxMatcherProgram = defaultMaxMatcherProgram
	}
	if c.MaxSilenceProgram == 0 {
		c.MaxSilenceProgram = max(defaultMaxSilenceProgram, c.MaxMatcherProgram)
	}
	if c.MaxLiveProgram == 0 {
		c.MaxLiveProgram = max(defaultMaxLiveProgram, c.MaxSilenceProgram)
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = defaultMaxDuration
	}
	if c.MaxRecorded == 0 {
		c.MaxRecorded = defaultMaxRecorded
	}
	if c.ReleaseInterval == 0 {
		c.ReleaseInterval = defaultReleaseInterval
	}
	if c.ReleaseLease == 0 {
		c.ReleaseLease = defaultReleaseLease
	}
	if c.ReleaseBatch == 0 {
		c.ReleaseBatch = defaultReleaseBatch
	}
	if c.CollectInterval == 0 {
		c.CollectInterval = defaultCollectInterval
	}
	if c.IdempotencyWindow == 0 {
		c.IdempotencyWindow = jobs.DefaultIdempotencyWindow
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = jobs.DefaultMaxRetry
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = defaultMaxBodyBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// validate reports every unusable field of a config that WithDefaults has
// filled, each naming the field and what to set.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("silences: "+format, args...)) }
	if c.Redis == nil {
		errs = append(errs, errors.New("silences: Config.Redis is required: pass the producer's Redis client"))
	}
	if c.Items == nil {
		errs = append(errs, errors.New("silences: Config.Items is required: pass the producer's *jobs.Enqueuer, which releases held messages"))
	}
	if c.CacheTTL < minCacheTTL {
		bad("Config.CacheTTL is %v; use at least %v (default %v)", c.CacheTTL, minCacheTTL, defaultCacheTTL)
	}
	if c.StaleFor < c.CacheTTL {
		bad("Config.StaleFor is %v; use at least Config.CacheTTL (%v; default %v)", c.StaleFor, c.CacheTTL, defaultStaleFor)
	}
	if c.Retention < minRetention {
		bad("Config.Retention is %v; use at least %v (default %v)", c.Retention, minRetention, defaultRetention)
	}
	if c.MaxSilences < 1 {
		bad("Config.MaxSilences is %d; use at least 1 (default %d)", c.MaxSilences, defaultMaxSilences)
	}
	if c.MaxExpired < 1 {
		bad("Config.MaxExpired is %d; use at least 1 (default %d)", c.MaxExpired, defaultMaxExpired)
	}
	errs = append(errs, c.validatePrograms()...)
	if c.MaxDuration < time.Minute {
		bad("Config.MaxDuration is %v; use at least 1m (default %v)", c.MaxDuration, defaultMaxDuration)
	}
	if c.MaxRecorded < 1 {
		bad("Config.MaxRecorded is %d; use at least 1 (default %d)", c.MaxRecorded, defaultMaxRecorded)
	}
	if c.ReleaseInterval < minReleaseInterval {
		bad("Config.ReleaseInterval is %v; use at least %v (default %v)", c.ReleaseInterval, minReleaseInterval, defaultReleaseInterval)
	}
	if c.ReleaseLease < minReleaseLeaseIntervals*c.ReleaseInterval {
		bad("Config.ReleaseLease is %v; use at least %d × Config.ReleaseInterval (%v; default %v)",
			c.ReleaseLease, minReleaseLeaseIntervals, minReleaseLeaseIntervals*c.ReleaseInterval, defaultReleaseLease)
	}
	if c.ReleaseBatch < 1 || c.ReleaseBatch > maxReleaseBatch {
		bad("Config.ReleaseBatch is %d; use 1 to %d (default %d)", c.ReleaseBatch, maxReleaseBatch, defaultReleaseBatch)
	}
	if c.CollectInterval < minReleaseInterval {
		bad("Config.CollectInterval is %v; use at least %v (default %v)", c.CollectInterval, minReleaseInterval, defaultCollectInterval)
	}
	if c.IdempotencyWindow < 0 {
		bad("Config.IdempotencyWindow is %v; use a positive duration (default %v)", c.IdempotencyWindow, jobs.DefaultIdempotencyWindow)
	}
	if c.MaxRetry < 0 {
		bad("Config.MaxRetry is %d; use 0 or more (default %d)", c.MaxRetry, jobs.DefaultMaxRetry)
	}
	if c.MaxBodyBytes < 1 {
		bad("Config.MaxBodyBytes is %d; use a positive size (default %d)", c.MaxBodyBytes, defaultMaxBodyBytes)
	}
	return errors.Join(errs...)
}

// validatePrograms checks the limits on regular expressions: each at
// least what a short pattern needs, and each no more than the next.
func (c Config) validatePrograms() []error {
	var errs []error
	if c.MaxMatcherProgram < minMatcherProgram {
		errs = append(errs, fmt.Errorf("silences: Config.MaxMatcherProgram is %d; use at least %d (default %d)",
			c.MaxMatcherProgram, minMatcherProgram, defaultMaxMatcherProgram))
	}
	if c.MaxSilenceProgram < c.MaxMatcherProgram {
		errs = append(errs, fmt.Errorf("silences: Config.MaxSilenceProgram is %d; use at least Config.MaxMatcherProgram (%d; default %d)",
			c.MaxSilenceProgram, c.MaxMatcherProgram, defaultMaxSilenceProgram))
	}
	if c.MaxLiveProgram < c.MaxSilenceProgram {
		errs = append(errs, fmt.Errorf("silences: Config.MaxLiveProgram is %d; use at least Config.MaxSilenceProgram (%d; default %d)",
			c.MaxLiveProgram, c.MaxSilenceProgram, defaultMaxLiveProgram))
	}
	return errs
}
