package producer

import (
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// The settings of the producer's HTTP server: its listeners, the body
// limit, the web UI and the metrics.
const (
	EnvListen             = "HERALD_LISTEN"
	EnvMaxBodyBytes       = "HERALD_MAX_BODY_BYTES"
	EnvMonitoringPath     = "HERALD_MONITORING_PATH"
	EnvMonitoringReadOnly = "HERALD_MONITORING_READONLY"
	EnvMetricsListen      = "HERALD_METRICS_LISTEN"
	EnvMetricsToken       = "HERALD_METRICS_TOKEN"
	EnvMetricsTokenFile   = "HERALD_METRICS_TOKEN_FILE"
	EnvMetricsCache       = "HERALD_METRICS_CACHE"
)

// Defaults of ServerConfig (DefaultMaxBodyBytes is also Config's).
const (
	DefaultListen         = ":8080"
	DefaultMaxBodyBytes   = 1 << 20
	DefaultMonitoringPath = "/monitoring"
	DefaultMetricsCache   = 5 * time.Second
	// exampleMetricsListen is the address the metrics listener's messages
	// suggest.
	exampleMetricsListen = ":9090"
)

// Bounds of ServerConfig.
const (
	// MinMaxBodyBytes is the smallest request body limit accepted.
	MinMaxBodyBytes = 1 << 10
	// MaxMetricsCache is the longest MetricsCache accepted.
	MaxMetricsCache = 5 * time.Minute
)

// reservedPaths are the API's own paths, which the web UI may not take.
var reservedPaths = []string{"/v1", "/livez", "/readyz", "/metrics"}

// ServerConfig holds the settings of the producer's HTTP server.
type ServerConfig struct {
	// Listen is the HTTP API address (HERALD_LISTEN, default
	// [DefaultListen]).
	Listen string
	// MaxBodyBytes bounds an HTTP request body (HERALD_MAX_BODY_BYTES,
	// default [DefaultMaxBodyBytes], at least [MinMaxBodyBytes]).
	MaxBodyBytes int64
	// MonitoringPath is where the Asynq web UI is mounted
	// (HERALD_MONITORING_PATH, default [DefaultMonitoringPath]); "" disables
	// it ("off" in the environment). Because WithDefaults fills an empty
	// path, clear it after WithDefaults to disable the UI.
	MonitoringPath string
	// MonitoringReadOnly hides the UI's mutating actions
	// (HERALD_MONITORING_READONLY).
	MonitoringReadOnly bool
	// MetricsListen, when set, serves /metrics on a listener of its own
	// instead of the API's (HERALD_METRICS_LISTEN).
	MetricsListen string
	// MetricsToken, when set, is required as a bearer token on /metrics
	// (HERALD_METRICS_TOKEN or HERALD_METRICS_TOKEN_FILE).
	MetricsToken, MetricsTokenFile string
	// MetricsCache is how long asynq's queue statistics are reused between
	// scrapes (HERALD_METRICS_CACHE, default [DefaultMetricsCache], at most
	// [MaxMetricsCache]); it bounds their Redis cost whatever the scrape
	// rate. NoMetricsCache queries Redis at every scrape.
	MetricsCache time.Duration
}

// NoMetricsCache is the MetricsCache that queries Redis at every scrape
// (HERALD_METRICS_CACHE=0), since a zero MetricsCache means the default.
const NoMetricsCache time.Duration = -1

// WithDefaults returns c with its zero fields set to their defaults.
func (c ServerConfig) WithDefaults() ServerConfig {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MonitoringPath == "" {
		c.MonitoringPath = DefaultMonitoringPath
	}
	if c.MetricsCache == 0 {
		c.MetricsCache = DefaultMetricsCache
	}
	return c
}

// ListenSpec binds HERALD_LISTEN to c.
func (c *ServerConfig) ListenSpec() config.Spec {
	return config.NewSpec(EnvListen, DefaultListen, "Address of the HTTP API.", config.StringVar(&c.Listen))
}

// UISpecs binds the body limit and the web UI's settings to c.
func (c *ServerConfig) UISpecs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvMaxBodyBytes, config.FormatBytes(DefaultMaxBodyBytes), "Largest accepted HTTP request body (bytes, KiB, MiB).", config.BytesVar(&c.MaxBodyBytes)),
		config.NewSpec(EnvMonitoringPath, DefaultMonitoringPath, `Path of the Asynq web UI; "off" disables it.`,
			config.OptStringVar(&c.MonitoringPath)),
		config.NewSpec(EnvMonitoringReadOnly, "false", "Serve the web UI without its mutating actions, even to the admin token.",
			config.BoolVar(&c.MonitoringReadOnly)),
	}
}

// MetricsSpecs binds the metrics settings to c.
func (c *ServerConfig) MetricsSpecs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvMetricsListen, "", "Address of a listener serving only /metrics; empty serves /metrics on the API's address.",
			config.StringVar(&c.MetricsListen)),
		config.SecretSpec(EnvMetricsToken, "Bearer token /metrics requires; unset serves it without authentication.",
			config.StringVar(&c.MetricsToken)),
		config.NewSpec(EnvMetricsTokenFile, "", "File holding the metrics token; excludes "+EnvMetricsToken+".",
			config.StringVar(&c.MetricsTokenFile)),
		config.NewSpec(EnvMetricsCache, config.FmtDur(DefaultMetricsCache), "How long asynq's queue statistics are reused between scrapes (bounds their Redis cost); 0 disables the cache.",
			metricsCacheVar(&c.MetricsCache)),
	}
}

// Specs binds every server setting to c.
func (c *ServerConfig) Specs() []config.Spec {
	return append(append([]config.Spec{c.ListenSpec()}, c.UISpecs()...), c.MetricsSpecs()...)
}

// metricsCacheVar is a duration where 0 stores NoMetricsCache.
func metricsCacheVar(p *time.Duration) config.Binding {
	d := config.DurationVar(p)
	return config.Binding{
		Set: func(s string) error {
			if err := d.Set(s); err != nil {
				return err
			}
			if *p == 0 {
				*p = NoMetricsCache
			}
			return nil
		},
		Get: func() string {
			if *p == NoMetricsCache {
				return "0s"
			}
			return d.Get()
		},
	}
}

// Metrics returns the /metrics bearer token, reading MetricsTokenFile when
// set; "" when neither is set.
func (c ServerConfig) Metrics() (string, error) {
	return config.SecretPair(c.MetricsToken, c.MetricsTokenFile, EnvMetricsToken, EnvMetricsTokenFile)
}

// Check reports every problem of the server's settings by their names.
func (c ServerConfig) Check(p *config.Problems) {
	if c.Listen == "" {
		p.Add(EnvListen, "must be host:port such as %q, got an empty value", DefaultListen)
	} else {
		config.ValidateListen(p, EnvListen, c.Listen, DefaultListen)
	}
	config.ValidateSecretPair(p, c.MetricsToken, c.MetricsTokenFile, EnvMetricsToken, EnvMetricsTokenFile)
	if c.MetricsListen != "" {
		config.ValidateListen(p, EnvMetricsListen, c.MetricsListen, exampleMetricsListen)
		if c.MetricsListen == c.Listen {
			p.Add(EnvMetricsListen, "is the API's address %q; pick another port, or leave it empty to serve /metrics on the API", c.Listen)
		}
	}
	if c.MetricsCache != NoMetricsCache && (c.MetricsCache < 0 || c.MetricsCache > MaxMetricsCache) {
		p.Add(EnvMetricsCache, "must be between 0 (no cache) and %s (e.g. %s), got %s",
			config.FmtDur(MaxMetricsCache), config.FmtDur(DefaultMetricsCache), config.FmtDur(c.MetricsCache))
	}
	if c.MaxBodyBytes < MinMaxBodyBytes {
		p.Add(EnvMaxBodyBytes, "must be at least %s (e.g. %s), got %d",
			config.FormatBytes(MinMaxBodyBytes), config.FormatBytes(DefaultMaxBodyBytes), c.MaxBodyBytes)
	}
	c.checkMonitoringPath(p)
}

// checkMonitoringPath checks the web UI's path, which must not overlap
// the API's own.
func (c ServerConfig) checkMonitoringPath(p *config.Problems) {
	mp := c.MonitoringPath
	if mp == "" {
		return
	}
	if !strings.HasPrefix(mp, "/") || mp == "/" || strings.HasSuffix(mp, "/") || strings.ContainsAny(mp, "?# \t") {
		p.Add(EnvMonitoringPath, "must be a path such as %q (leading slash, no trailing slash), or \"off\", got %q",
			DefaultMonitoringPath, mp)
	}
	for _, r := range reservedPaths {
		if mp == r || strings.HasPrefix(mp, r+"/") || strings.HasPrefix(r, mp+"/") {
			p.Add(EnvMonitoringPath, "is %q, which overlaps the API's %s; pick a path of its own such as %q",
				mp, r, DefaultMonitoringPath)
		}
	}
}
