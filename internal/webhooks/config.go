package webhooks

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

// Defaults of Config.
const (
	// DefaultMaxBodyBytes bounds a webhook body: 256 KiB, well below the
	// API's 1 MiB, since signed webhooks are read before they are
	// authenticated.
	DefaultMaxBodyBytes = 256 << 10
	// defaultGrafanaSignatureHeader is the header Grafana puts its HMAC
	// signature in unless the contact point names another.
	defaultGrafanaSignatureHeader = "X-Grafana-Alerting-Signature"
	// defaultGrafanaMaxSkew is how far a signed Grafana timestamp may be from
	// Herald's clock.
	defaultGrafanaMaxSkew = 5 * time.Minute
	// defaultSentryMaxSkew is how far Sentry-Hook-Timestamp may be from
	// Herald's clock.
	defaultSentryMaxSkew = 5 * time.Minute
)

// Config configures the webhook receivers. Secrets here are never logged
// and never appear in error messages.
type Config struct {
	// Dispatcher routes the alerts and stores their messages. Required.
	Dispatcher alerts.Dispatcher

	// Keyring authenticates the Alertmanager, Grafana and generic
	// webhooks: a token with the send scope, sent as a bearer token or as
	// the basic-auth password. httpapi.OpenKeyring accepts them without
	// one, for local use only; it never disables the GitHub, Sentry or
	// Grafana signatures. Required.
	Keyring *httpapi.Keyring

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
	// SentryMaxSkew bounds how far Sentry-Hook-Timestamp may be from now;
	// default 5m. Sentry does not sign the timestamp, so it only refuses
	// naive replays; the body digest in the idempotency key refuses the
	// others within the idempotency window.
	SentryMaxSkew time.Duration

	// UnauthenticatedReads bounds how many bodies of not yet authenticated
	// requests (signed webhooks; all webhooks with an open keyring) are read
	// at once; default 16. UnauthenticatedReadTimeout bounds waiting for a
	// slot plus reading such a body; default 10s.
	UnauthenticatedReads       int
	UnauthenticatedReadTimeout time.Duration

	// Generic finds the mapping of a generic webhook by name, per request
	// (so a reloaded routing file applies at once). Nil: every generic
	// webhook answers 404.
	Generic genericLookup

	// MaxBodyBytes bounds request bodies; default 256 KiB. A declared
	// Content-Length over it is refused before the body is read.
	MaxBodyBytes int64
	// Logger receives one line per request handled; default slog.Default().
	Logger *slog.Logger
	// Clock returns the current time; default time.Now. Tests set it.
	Clock func() time.Time
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.GrafanaSignatureHeader == "" {
		c.GrafanaSignatureHeader = defaultGrafanaSignatureHeader
	}
	if c.GrafanaMaxSkew == 0 {
		c.GrafanaMaxSkew = defaultGrafanaMaxSkew
	}
	if c.SentryMaxSkew == 0 {
		c.SentryMaxSkew = defaultSentryMaxSkew
	}
	if c.UnauthenticatedReads == 0 {
		c.UnauthenticatedReads = httpapi.DefaultGateReads
	}
	if c.UnauthenticatedReadTimeout == 0 {
		c.UnauthenticatedReadTimeout = httpapi.DefaultGateTimeout
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
	if c.Keyring == nil {
		errs = append(errs, errors.New("webhooks: Config.Keyring is required: pass the API's keyring, or httpapi.OpenKeyring() for local use"))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("webhooks: Config.MaxBodyBytes must be positive; 0 means 256 KiB"))
	}
	if c.SentryMaxSkew < 0 {
		errs = append(errs, errors.New("webhooks: Config.SentryMaxSkew must be positive; 0 means 5m"))
	}
	if c.UnauthenticatedReads < 0 || c.UnauthenticatedReadTimeout < 0 {
		errs = append(errs, errors.New("webhooks: Config.UnauthenticatedReads and UnauthenticatedReadTimeout must be positive; 0 means 16 and 10s"))
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
