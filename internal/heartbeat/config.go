package heartbeat

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
)

// Bounds on what a ping may declare.
const (
	// minInterval is the shortest interval a heartbeat may declare.
	minInterval = time.Second
	// maxInterval is the longest interval (or grace) a heartbeat may
	// declare: enough for a yearly job.
	maxInterval = 400 * 24 * time.Hour
	// maxNameLen is the longest heartbeat name.
	maxNameLen = 64
)

// Defaults of Config, named once so that WithDefaults, the errors that
// suggest them and the producer's settings all say the same.
const (
	DefaultCheckInterval   = 5 * time.Second
	defaultDispatchTimeout = 10 * time.Second
	defaultMaxBodyBytes    = 64 << 10
	DefaultMaxHeartbeats   = 1000
	defaultBatchSize       = 100
	// defaultMaxFailDetail is how much of a /fail body becomes the alert's
	// detail.
	defaultMaxFailDetail = 1024
	// fallbackGraceFraction and fallbackMinGrace are what the fields
	// DefaultGraceFraction and MinDefaultGrace fall back to when zero.
	fallbackGraceFraction = 0.1
	fallbackMinGrace      = 30 * time.Second
)

// Bounds of Config that validate enforces.
const (
	// minCheckInterval is the shortest CheckInterval: every producer runs
	// a check script this often, and a tighter loop only loads Redis.
	minCheckInterval = 100 * time.Millisecond
	// maxGraceFraction bounds DefaultGraceFraction.
	maxGraceFraction = 10
	// maxFailDetailLimit bounds MaxFailDetail, so that the detail and
	// the rest of the alert fit in one alert body.
	maxFailDetailLimit = 8 << 10
)

// codeTooManyHeartbeats is the error code of the 409 refusing a ping that
// would create a heartbeat beyond Config.MaxHeartbeats.
const codeTooManyHeartbeats = "too_many_heartbeats"

// Config configures the heartbeat handler and checker. The zero value of each
// optional field means its default; the handler and the checkers of one
// deployment should share the grace and severity defaults.
type Config struct {
	// Redis holds the heartbeat state. Required.
	Redis redis.UniversalClient
	// Dispatcher turns overdue and recovery alerts into SendMessage tasks
	// through the routes. Required.
	Dispatcher alerts.Dispatcher
	// CheckInterval is how often a checker looks for overdue heartbeats
	// (HERALD_HEARTBEAT_CHECK_INTERVAL, default [DefaultCheckInterval], at
	// least [minCheckInterval]); each wait is jittered by ±20% so replicas
	// spread out.
	CheckInterval time.Duration
	// DispatchTimeout bounds one Dispatch call. A notification a replica has
	// claimed is leased to it for DispatchTimeout plus CheckInterval; if the
	// replica dies meanwhile, another one takes it over when the lease runs
	// out. Default 10s.
	DispatchTimeout time.Duration
	// DefaultSeverity is the severity of a heartbeat whose first ping names
	// none. Default critical, which the default routes send to the critical
	// queue.
	DefaultSeverity alerts.Severity
	// DefaultGraceFraction and MinDefaultGrace give the grace of a heartbeat
	// that declares none: the larger of DefaultGraceFraction × interval and
	// MinDefaultGrace. Defaults 0.1 and 30s (a 5m job is overdue after
	// 5m30s, a daily one after 26h24m). For a scheduled heartbeat the
	// interval is the gap between the scheduled time the deadline counts
	// from and the one after it. Zero means the default; for practically
	// none, set a tiny value such as 1µs.
	DefaultGraceFraction float64
	MinDefaultGrace      time.Duration
	// MaxBodyBytes bounds a ping's JSON body. Default 64 KiB.
	MaxBodyBytes int64
	// MaxFailDetail is how many bytes of a /fail body (cleaned of control
	// characters and invalid UTF-8) the alert carries as its detail; the
	// rest is dropped, never refused. Default 1 KiB, at most 8 KiB.
	MaxFailDetail int
	// MaxHeartbeats bounds the number of heartbeats: the first ping of one
	// more is refused with a 409 (pings of existing ones still work), so
	// that a sender cannot grow Redis and every check without bound
	// (HERALD_MAX_HEARTBEATS, default [DefaultMaxHeartbeats]).
	MaxHeartbeats int
	// BatchSize is the most overdue heartbeats (and pending notifications)
	// one check script handles; a check with more runs the script again.
	// Default 100.
	BatchSize int
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// now, when set (by tests), replaces Redis's clock in every script.
	now func() time.Time
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.CheckInterval == 0 {
		c.CheckInterval = DefaultCheckInterval
	}
	if c.DispatchTimeout == 0 {
		c.DispatchTimeout = defaultDispatchTimeout
	}
	if c.DefaultSeverity == "" {
		c.DefaultSeverity = alerts.SeverityCritical
	}
	if c.DefaultGraceFraction == 0 {
		c.DefaultGraceFraction = fallbackGraceFraction
	}
	if c.MinDefaultGrace == 0 {
		c.MinDefaultGrace = fallbackMinGrace
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = defaultMaxBodyBytes
	}
	if c.MaxFailDetail == 0 {
		c.MaxFailDetail = defaultMaxFailDetail
	}
	if c.BatchSize == 0 {
		c.BatchSize = defaultBatchSize
	}
	if c.MaxHeartbeats == 0 {
		c.MaxHeartbeats = DefaultMaxHeartbeats
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// validate reports every unusable field of a config that WithDefaults has
// filled: the settings' rules (Check) and those of the other fields.
func (c Config) validate() error {
	var p config.Problems
	c.Check(&p)
	errs := []error{p.Err()}
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("heartbeat: "+format, args...)) }
	if c.Redis == nil {
		errs = append(errs, errors.New("heartbeat: Config.Redis is required: pass the producer's Redis client"))
	}
	if c.Dispatcher == nil {
		errs = append(errs, errors.New("heartbeat: Config.Dispatcher is required: pass the alert router"))
	}
	if c.DispatchTimeout < 0 {
		bad("Config.DispatchTimeout is %v; use a positive duration (default %v)", c.DispatchTimeout, defaultDispatchTimeout)
	}
	switch c.DefaultSeverity {
	case alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
	default:
		bad("Config.DefaultSeverity %q is not one of critical, warning, info", c.DefaultSeverity)
	}
	if c.DefaultGraceFraction < 0 || c.DefaultGraceFraction > maxGraceFraction {
		bad("Config.DefaultGraceFraction is %v; use a fraction of the interval between 0 and %v (default %v)",
			c.DefaultGraceFraction, maxGraceFraction, fallbackGraceFraction)
	}
	if c.MinDefaultGrace < 0 || c.MinDefaultGrace > maxInterval {
		bad("Config.MinDefaultGrace is %v; use a duration between 0 and %v (default %v)", c.MinDefaultGrace, maxInterval, fallbackMinGrace)
	}
	if c.MaxBodyBytes < 0 {
		bad("Config.MaxBodyBytes is %d; use a positive size (default %d KiB)", c.MaxBodyBytes, defaultMaxBodyBytes>>10)
	}
	if c.MaxFailDetail < 0 || c.MaxFailDetail > maxFailDetailLimit {
		bad("Config.MaxFailDetail is %d; use between 1 and %d bytes (default %d)", c.MaxFailDetail, maxFailDetailLimit, defaultMaxFailDetail)
	}
	if c.BatchSize < 1 {
		bad("Config.BatchSize is %d; use at least 1 (default %d)", c.BatchSize, defaultBatchSize)
	}
	return errors.Join(errs...)
}

// lease is how long a claimed notification stays with the replica that
// claimed it before another replica may take it over.
func (c Config) lease() time.Duration { return c.DispatchTimeout + c.CheckInterval }
