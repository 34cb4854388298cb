package app

import (
	"errors"
	"regexp"
	"strings"

	"github.com/herald-dev/herald/internal/config"
)

// CheckProducer reports whether `producer serve` would start with cfg as far
// as its settings go: the API token is set and readable (its file exists,
// is not empty and this user may read it). It also refuses a bot token in
// the producer's environment (getenv): the producer faces the internet and
// never needs it. It uses no network. Compose runs it as an init step
// (`producer check`), so that a missing secret stops `docker compose up`
// with the reason instead of a restart loop.
func CheckProducer(cfg config.Producer, getenv func(string) string) error {
	for _, name := range []string{config.EnvTelegramToken, config.EnvTelegramTokenFile} {
		if getenv != nil && getenv(name) != "" {
			return errors.New(name + " is set in the producer's environment; only workers need the bot token: remove it from .env (docker compose gives it to the workers as a secret)")
		}
	}
	if err := cfg.ValidateServe(); err != nil {
		return err
	}
	_, err := cfg.Token()
	return err
}

// botTokenShape is what @BotFather hands out: the bot's numeric id, a colon
// and a secret of about 35 characters.
var botTokenShape = regexp.MustCompile(`^[0-9]{5,}:[A-Za-z0-9_-]{30,}$`)

// CheckWorker reports whether a worker would start with cfg as far as its
// settings go: the bot token is set and readable, and, for Telegram's own
// Bot API, shaped like a bot token (a fake or self-hosted API may take any).
// It uses no network (`worker check`).
func CheckWorker(cfg config.Worker) error {
	token, err := cfg.Token()
	if err != nil {
		return err
	}
	if _, err := NewSender(cfg); err != nil {
		return err
	}
	if strings.TrimRight(cfg.Telegram.APIURL, "/") == config.DefaultTelegramAPIURL && !botTokenShape.MatchString(token) {
		src := config.EnvTelegramToken
		if cfg.Telegram.TokenFile != "" {
			src = config.EnvTelegramTokenFile + " (" + cfg.Telegram.TokenFile + ")"
		}
		// Never echo the token, not even a part of it.
		return errors.New(src + ": the bot token is not shaped like one (digits, a colon, then about 35 letters, digits, _ or -); copy it from @BotFather")
	}
	return nil
}
