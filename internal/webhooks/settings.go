package webhooks

import (
	"github.com/herald-dev/herald/internal/config"
)

// The webhook receivers' settings.
const (
	EnvGitHubSecret      = "HERALD_GITHUB_WEBHOOK_SECRET"
	EnvGitHubSecretFile  = "HERALD_GITHUB_WEBHOOK_SECRET_FILE"
	EnvSentrySecret      = "HERALD_SENTRY_CLIENT_SECRET"
	EnvSentrySecretFile  = "HERALD_SENTRY_CLIENT_SECRET_FILE"
	EnvGrafanaSecret     = "HERALD_GRAFANA_WEBHOOK_SECRET"
	EnvGrafanaSecretFile = "HERALD_GRAFANA_WEBHOOK_SECRET_FILE"
	EnvGrafanaTimestamp  = "HERALD_GRAFANA_TIMESTAMP_HEADER"
	EnvWebhookMaxBody    = "HERALD_WEBHOOK_MAX_BODY_BYTES"
)

// MinMaxBodyBytes is the smallest webhook body limit accepted.
const MinMaxBodyBytes = 1 << 10

// SecretSpecs binds the GitHub, Sentry and Grafana secrets and the Grafana
// timestamp header to c, in documentation order.
func (c *Config) SecretSpecs() []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvGitHubSecret, "GitHub webhook secret (X-Hub-Signature-256); unset disables /v1/webhooks/github.",
			config.StringVar(&c.GitHub.Secret)),
		config.NewSpec(EnvGitHubSecretFile, "", "File holding the GitHub webhook secret.", config.StringVar(&c.GitHub.SecretFile)),
		config.SecretSpec(EnvSentrySecret, "Sentry integration client secret (Sentry-Hook-Signature); unset disables /v1/webhooks/sentry.",
			config.StringVar(&c.Sentry.Secret)),
		config.NewSpec(EnvSentrySecretFile, "", "File holding the Sentry client secret.", config.StringVar(&c.Sentry.SecretFile)),
		config.SecretSpec(EnvGrafanaSecret, "Grafana contact point HMAC secret; when set, Grafana webhooks must be signed.",
			config.StringVar(&c.Grafana.Secret)),
		config.NewSpec(EnvGrafanaSecretFile, "", "File holding the Grafana HMAC secret.", config.StringVar(&c.Grafana.SecretFile)),
		config.NewSpec(EnvGrafanaTimestamp, "", "Grafana's signature timestamp header, when the contact point sets one.",
			config.StringVar(&c.Grafana.TimestampHeader)),
	}
}

// BodySpec binds HERALD_WEBHOOK_MAX_BODY_BYTES to c; apiLimit names the
// API's own limit, the smaller of the two applying.
func (c *Config) BodySpec(apiLimit string) config.Spec {
	return config.NewSpec(EnvWebhookMaxBody, config.FormatBytes(DefaultMaxBodyBytes),
		"Largest accepted webhook body (the smaller of this and "+apiLimit+" applies).", config.BytesVar(&c.MaxBodyBytes))
}

// Specs binds every webhook setting to c: the secrets, then the body
// limit (beside HERALD_MAX_BODY_BYTES, the API's).
func (c *Config) Specs() []config.Spec {
	return append(c.SecretSpecs(), c.BodySpec("HERALD_MAX_BODY_BYTES"))
}

// Check reports every problem of the webhook settings by their names.
func (c Config) Check(p *config.Problems) {
	config.ValidateSecretPair(p, c.GitHub.Secret, c.GitHub.SecretFile, EnvGitHubSecret, EnvGitHubSecretFile)
	config.ValidateSecretPair(p, c.Sentry.Secret, c.Sentry.SecretFile, EnvSentrySecret, EnvSentrySecretFile)
	config.ValidateSecretPair(p, c.Grafana.Secret, c.Grafana.SecretFile, EnvGrafanaSecret, EnvGrafanaSecretFile)
	if c.Grafana.TimestampHeader != "" && c.Grafana.Secret == "" && c.Grafana.SecretFile == "" {
		p.Add(EnvGrafanaTimestamp, "needs %s: the timestamp is only checked as part of the signature; set the secret or unset the header",
			config.Ref(EnvGrafanaSecret))
	}
	if c.MaxBodyBytes < MinMaxBodyBytes {
		p.Add(EnvWebhookMaxBody, "must be at least %s (e.g. %s), got %d",
			config.FormatBytes(MinMaxBodyBytes), config.FormatBytes(DefaultMaxBodyBytes), c.MaxBodyBytes)
	}
}
