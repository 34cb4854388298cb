package settings

import (
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/telegram"
)

// Telegram environment variables.
const (
	EnvTelegramToken     = "TELEGRAM_BOT_TOKEN"
	EnvTelegramTokenFile = "TELEGRAM_BOT_TOKEN_FILE"
	EnvTelegramAPIURL    = "TELEGRAM_API_URL"
	EnvTelegramTimeout   = "TELEGRAM_TIMEOUT"
)

// DefaultTelegramAPIURL is the Bot API the worker talks to unless told
// otherwise: the telegram client's default, named here too because callers
// compare a configured URL with it (a real token shape is only required
// there). The timeout's default is the client's as well, and the
// retry_after unit's is the worker's.
const DefaultTelegramAPIURL = telegram.DefaultAPIURL

// Telegram holds what the worker needs to reach the Bot API.
type Telegram struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN). It may be empty when the
	// worker runs against a fake Bot API.
	Token string
	// TokenFile is a file holding the token (TELEGRAM_BOT_TOKEN_FILE); its
	// content is trimmed. It cannot be combined with Token.
	TokenFile string
	// APIURL is the Bot API base URL (TELEGRAM_API_URL), without a trailing
	// slash; default [telegram.DefaultAPIURL].
	APIURL string
	// Timeout bounds one Bot API request (TELEGRAM_TIMEOUT, default
	// [telegram.DefaultTimeout]).
	Timeout time.Duration
}

// Endpoint returns the API endpoint pattern for
// tgbotapi.NewBotAPIWithAPIEndpoint: APIURL followed by "/bot%s/%s", where the
// placeholders take the token and the method name. Any '%' already in
// APIURL is escaped.
func (t Telegram) Endpoint() string {
	return strings.ReplaceAll(strings.TrimRight(t.APIURL, "/"), "%", "%%") + "/bot%s/%s"
}

// String describes the settings with the token masked.
func (t Telegram) String() string {
	tok := ""
	if t.Token != "" {
		tok = config.RedactedValue
	}
	return "{Token:" + tok + " TokenFile:" + t.TokenFile + " APIURL:" + t.APIURL + " Timeout:" + config.FmtDur(t.Timeout) + "}"
}

// LogValue logs the settings with the token masked.
func (t Telegram) LogValue() slog.Value {
	tok := ""
	if t.Token != "" {
		tok = config.RedactedValue
	}
	return slog.GroupValue(
		slog.String("token", tok),
		slog.String("token_file", t.TokenFile),
		slog.String("api_url", t.APIURL),
		slog.String("timeout", config.FmtDur(t.Timeout)),
	)
}

// withDefaults fills the API URL and the timeout from the client's
// defaults.
func (t Telegram) withDefaults() Telegram {
	if t.APIURL == "" {
		t.APIURL = telegram.DefaultAPIURL
	}
	if t.Timeout == 0 {
		t.Timeout = telegram.DefaultTimeout
	}
	return t
}

// token returns the configured token, reading TokenFile when set.
func (t Telegram) token() (string, error) {
	return config.SecretPair(t.Token, t.TokenFile, EnvTelegramToken, EnvTelegramTokenFile)
}

// validate checks token exclusivity and readability, the URL and the timeout.
func (t Telegram) validate(p *config.Problems) {
	config.ValidateSecretPair(p, t.Token, t.TokenFile, EnvTelegramToken, EnvTelegramTokenFile)
	u, err := url.Parse(t.APIURL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		p.Add(EnvTelegramAPIURL, "must be an http:// or https:// URL such as %s, got %q", telegram.DefaultAPIURL, redactURL(t.APIURL))
	case strings.Contains(u.Path, "/bot"):
		// The path may hold the token; do not echo it.
		p.Add(EnvTelegramAPIURL, "must be the base URL only (e.g. %s), without /bot<token>", telegram.DefaultAPIURL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		p.Add(EnvTelegramAPIURL, "must be a plain base URL without user, query or fragment, got %q", redactURL(t.APIURL))
	}
	p.Positive(EnvTelegramTimeout, t.Timeout, telegram.DefaultTimeout)
}

// telegramSpecs binds the Bot API settings to t.
func telegramSpecs(t *Telegram) []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvTelegramToken, `Token of the bot "default" (see `+EnvBots+`). Prefer the _FILE variant.`,
			config.StringVar(&t.Token)),
		config.NewSpec(EnvTelegramTokenFile, "", "File holding the bot token (content trimmed); excludes "+EnvTelegramToken+".",
			config.StringVar(&t.TokenFile)),
		config.NewSpec(EnvTelegramAPIURL, telegram.DefaultAPIURL, "Bot API base URL, http:// or https://.",
			config.BaseURLVar(&t.APIURL)),
		config.NewSpec(EnvTelegramTimeout, config.FmtDur(telegram.DefaultTimeout), "Timeout of one Bot API request.", config.DurationVar(&t.Timeout)),
	}
}
