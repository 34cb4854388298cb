package settings

import (
	"log/slog"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/telegram"
)

// The default bot's token variables (every other bot's are named after
// it: BotTokenEnv).
const (
	EnvTelegramToken     = "TELEGRAM_BOT_TOKEN"
	EnvTelegramTokenFile = "TELEGRAM_BOT_TOKEN_FILE"
)

// Telegram holds what the worker needs to reach the Bot API: the default
// bot's token source and the client's settings.
type Telegram struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN). It may be empty when the
	// worker runs against a fake Bot API.
	Token string
	// TokenFile is a file holding the token (TELEGRAM_BOT_TOKEN_FILE); its
	// content is trimmed. It cannot be combined with Token.
	TokenFile string
	// Client holds the Bot API URL and timeout, bound by
	// telegram.Config.Specs; each bot's client is built from it with the
	// bot's token.
	Client telegram.Config
}

// String describes the settings with the token masked.
func (t Telegram) String() string {
	tok := ""
	if t.Token != "" {
		tok = config.RedactedValue
	}
	return "{Token:" + tok + " TokenFile:" + t.TokenFile + " APIURL:" + t.Client.APIURL + " Timeout:" + config.FmtDur(t.Client.Timeout) + "}"
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
		slog.String("api_url", t.Client.APIURL),
		slog.String("timeout", config.FmtDur(t.Client.Timeout)),
	)
}

// withDefaults fills the client's defaults.
func (t Telegram) withDefaults() Telegram {
	t.Client = t.Client.WithDefaults()
	return t
}

// token returns the configured token, reading TokenFile when set.
func (t Telegram) token() (string, error) {
	return config.SecretPair(t.Token, t.TokenFile, EnvTelegramToken, EnvTelegramTokenFile)
}

// validate checks token exclusivity and readability, and the client's
// settings.
func (t Telegram) validate(p *config.Problems) {
	config.ValidateSecretPair(p, t.Token, t.TokenFile, EnvTelegramToken, EnvTelegramTokenFile)
	t.Client.Check(p)
}

// telegramSpecs binds the default bot's token and the Bot API settings to
// t.
func telegramSpecs(t *Telegram) []config.Spec {
	return append([]config.Spec{
		config.SecretSpec(EnvTelegramToken, `Token of the bot "default" (see `+EnvBots+`). Prefer the _FILE variant.`,
			config.StringVar(&t.Token)),
		config.NewSpec(EnvTelegramTokenFile, "", "File holding the bot token (content trimmed); excludes "+EnvTelegramToken+".",
			config.StringVar(&t.TokenFile)),
	}, t.Client.Specs()...)
}
