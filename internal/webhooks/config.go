package webhooks

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
)

// Defaults of Config.
const (
	// DefaultMaxBodyBytes bounds a webhook body: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultGrafanaSignatureHeader is the header Grafana puts its HMAC
	// signature in unless the contact point names another.
	DefaultGrafanaSignatureHeader = "X-Grafana-Alerting-Signature"
	// DefaultGrafanaMaxSkew is how far a signed Grafana timestamp may be from
	// Herald's clock.
	DefaultGrafanaMaxSkew = 5 * time.Minute
)

// Config configures the webhook receivers. Secrets here are never logged
// and never appear in error messages.
type Config struct {
	// Dispatcher routes the alerts and stores their messages. Required.
	Dispatcher alerts.Dispatcher

	// Token authenticates the Alertmanager, Grafana and generic webhooks:
	// sent as a bearer token or as the basic-auth password. Required unless
	// AuthDisabled.
	Token string
	// AuthDisabled accepts those three webhooks without a token, for local
	// use only. It never disables the GitHub, Sentry or Grafana signatures.
	AuthDisabled bool

	// GrafanaSecret, when set, makes the Grafana webhook also require the
	// HMAC-SHA256 signature configured on the contact point.
	GrafanaSecret string
	// GrafanaSignatureHeader is the header holding Grafana's signature;
	// default X-Grafana-Alerting-Signature.
	GrafanaSignatureHeader string
	// GrafanaTimestampHeader is the contact point's optional timestamp
	// header. When set, the signature covers "<timestamp>:<body>" and the
	// timestamp must be within GrafanaMaxSkew of now. Default: none.
	GrafanaTimestampHeader string
	// GrafanaMaxSkew bounds the age of a signed timestamp; default 5m.
	GrafanaMaxSkew time.Duration

	// GitHubSecret is the webhook secret of the GitHub webhook. Without it
	// the GitHub endpoint answers 404: unsigned payloads are never taken.
	GitHubSecret string
	// SentrySecret is the client secret of the Sentry integration. Without
	// it the Sentry endpoint answers 404.
	SentrySecret string

	// Generic finds the mapping of a generic webhook by name, per request
	// (so a reloaded routing file applies at once). Nil: every generic
	// webhook answers 404.
	Generic GenericLookup

	// MaxBodyBytes bounds request bodies; default 1 MiB.
	MaxBodyBytes int64
	// Logger receives one line per request handled; default slog.Default().
	Logger *slog.Logger
	// Clock returns the current time; default time.Now. Tests set it.
	Clock func() time.Time
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.GrafanaSignatureHeader == "" {
		c.GrafanaSignatureHeader = DefaultGrafanaSignatureHeader
	}
	if c.GrafanaMaxSkew == 0 {
		c.GrafanaMaxSkew = DefaultGrafanaMaxSkew
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// validate reports every unusable field of a defaulted config.
func (c Config) validate() error {
	var errs []error
	if c.Dispatcher == nil {
		errs = append(errs, errors.New("webhooks: Config.Dispatcher is required: pass the alerts router"))
	}
	if c.Token == "" && !c.AuthDisabled {
		errs = append(errs, errors.New("webhooks: Config.Token is required: set the API token, or AuthDisabled for local use"))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("webhooks: Config.MaxBodyBytes must be positive; 0 means 1 MiB"))
	}
	if c.GrafanaMaxSkew < 0 {
		errs = append(errs, errors.New("webhooks: Config.GrafanaMaxSkew must be positive; 0 means 5m"))
	}
	if h := c.GrafanaSignatureHeader; http.CanonicalHeaderKey(h) == http.CanonicalHeaderKey(c.GrafanaTimestampHeader) {
		errs = append(errs, errors.New("webhooks: Config.GrafanaTimestampHeader must differ from GrafanaSignatureHeader"))
	}
	if c.GrafanaTimestampHeader != "" && c.GrafanaSecret == "" {
		errs = append(errs, errors.New("webhooks: Config.GrafanaTimestampHeader needs GrafanaSecret: the timestamp is only checked as part of the signature"))
	}
	return errors.Join(errs...)
}
