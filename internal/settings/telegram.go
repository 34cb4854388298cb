package settings

import (
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/worker"
)

// Telegram environment variables.
const (
	EnvTelegramToken     = "TELEGRAM_BOT_TOKEN"
	EnvTelegramTokenFile = "TELEGRAM_BOT_TOKEN_FILE"
	EnvTelegramAPIURL    = "TELEGRAM_API_URL"
	EnvTelegramTimeout   = "TELEGRAM_TIMEOUT"
	// EnvTelegramRetryAfterUnit is for tests and benchmarks against a fake
	// Bot API whose clock runs faster than real time.
	EnvTelegramRetryAfterUnit = "TELEGRAM_RETRY_AFTER_UNIT"
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
	// RetryAfterUnit is how long one second of a 429's retry_after lasts
	// (TELEGRAM_RETRY_AFTER_UNIT, default [worker.DefaultRetryAfterUnit],
	// Telegram's second). Only a fake Bot API that runs Telegram's clock
	// faster (tests, benchmarks) needs another value.
	RetryAfterUnit time.Duration
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

// withDefaults fills the API URL, the timeout and the retry_after unit
// from the client's and the worker's defaults.
func (t Telegram) withDefaults() Telegram {
	if t.APIURL == "" {
		t.APIURL = telegram.DefaultAPIURL
	}
	if t.Timeout == 0 {
		t.Timeout = telegram.DefaultTimeout
	}
	if t.RetryAfterUnit == 0 {
		t.RetryAfterUnit = worker.DefaultRetryAfterUnit
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
		p.Add(EnvTelegramAPIURL, "must be an http:// or https:// URL such as %s, got %q", telegram.DefaultAPIURL, redisconn.RedactURL(t.APIURL))
	case strings.Contains(u.Path, "/bot"):
		// The path may hold the token; do not echo it.
		p.Add(EnvTelegramAPIURL, "must be the base URL only (e.g. %s), without /bot<token>", telegram.DefaultAPIURL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		p.Add(EnvTelegramAPIURL, "must be a plain base URL without user, query or fragment, got %q", redisconn.RedactURL(t.APIURL))
	}
	p.Positive(EnvTelegramTimeout, t.Timeout, telegram.DefaultTimeout)
	if most := worker.DefaultRetryAfterUnit; t.RetryAfterUnit <= 0 || t.RetryAfterUnit > most {
		p.Add(EnvTelegramRetryAfterUnit, "must be above 0 and at most %s (Telegram's own; less only for a time-scaled fake), got %s",
			config.FmtDur(most), config.FmtDur(t.RetryAfterUnit))
	}
}
