package webhooks

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
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

	// Grafana, GitHub and Sentry configure the signed receivers (each
	// integration's config is beside its receiver: grafana.go, github.go,
	// sentry.go).
	Grafana GrafanaConfig
	GitHub  GitHubConfig
	Sentry  SentryConfig

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

	// MaxBodyBytes bounds request bodies (HERALD_WEBHOOK_MAX_BODY_BYTES;
	// default [DefaultMaxBodyBytes], at least [MinMaxBodyBytes]). A declared
	// Content-Length over it is refused before the body is read.
	MaxBodyBytes int64
	// Logger receives one line per request handled; default slog.Default().
	Logger *slog.Logger
	// Clock returns the current time; default time.Now. Tests set it.
	Clock func() time.Time
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.Grafana = c.Grafana.withDefaults()
	c.Sentry = c.Sentry.withDefaults()
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

// validate reports every unusable field of a defaulted config: the
// settings' rules (Check) and those of the fields a caller fills in.
func (c Config) validate() error {
	var p config.Problems
	c.Check(&p)
	errs := []error{p.Err()}
	if c.Dispatcher == nil {
		errs = append(errs, errors.New("webhooks: Config.Dispatcher is required: pass the alerts router"))
	}
	if c.Keyring == nil {
		errs = append(errs, errors.New("webhooks: Config.Keyring is required: pass the API's keyring, or httpapi.OpenKeyring() for local use"))
	}
	if c.Sentry.MaxSkew < 0 {
		errs = append(errs, errors.New("webhooks: Config.Sentry.MaxSkew must be positive; 0 means 5m"))
	}
	if c.UnauthenticatedReads < 0 || c.UnauthenticatedReadTimeout < 0 {
		errs = append(errs, errors.New("webhooks: Config.UnauthenticatedReads and UnauthenticatedReadTimeout must be positive; 0 means 16 and 10s"))
	}
	if c.Grafana.MaxSkew < 0 {
		errs = append(errs, errors.New("webhooks: Config.Grafana.MaxSkew must be positive; 0 means 5m"))
	}
	if h := c.Grafana.SignatureHeader; http.CanonicalHeaderKey(h) == http.CanonicalHeaderKey(c.Grafana.TimestampHeader) {
		errs = append(errs, errors.New("webhooks: Config.Grafana.TimestampHeader must differ from SignatureHeader"))
	}
	return errors.Join(errs...)
}

// withSecrets returns c with each secret read from its file when one is
// named, so that the receivers see only the secrets themselves.
func (c Config) withSecrets() (Config, error) {
	var err error
	if c.GitHub.Secret, err = config.SecretPair(c.GitHub.Secret, c.GitHub.SecretFile, EnvGitHubSecret, EnvGitHubSecretFile); err != nil {
		return Config{}, err
	}
	if c.Sentry.Secret, err = config.SecretPair(c.Sentry.Secret, c.Sentry.SecretFile, EnvSentrySecret, EnvSentrySecretFile); err != nil {
		return Config{}, err
	}
	if c.Grafana.Secret, err = config.SecretPair(c.Grafana.Secret, c.Grafana.SecretFile, EnvGrafanaSecret, EnvGrafanaSecretFile); err != nil {
		return Config{}, err
	}
	c.GitHub.SecretFile, c.Sentry.SecretFile, c.Grafana.SecretFile = "", "", ""
	return c, nil
}
