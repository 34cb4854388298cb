package app

import (
	"errors"
	"log/slog"
	"regexp"
	"strings"

	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/webhooks"
)

// CheckProducer reports whether `producer serve` would start with cfg as far
// as its settings and files go: the API's tokens are set and readable (their
// files exist, are not empty and this user may read them; the tokens file
// reads without a mistake), and the routing file and the feed list load as
// serve and `producer feeds` load them (checkProducerFiles). It also refuses a bot token in
// the producer's environment (getenv), the default bot's or that of any bot
// HERALD_BOTS lists: the producer faces the internet and never needs one.
// It uses no network. Compose runs it as an init step (`producer check`),
// so that a missing secret stops `docker compose up` with the reason
// instead of a restart loop.
func CheckProducer(cfg settings.Producer, getenv func(string) string) error {
	vars := []string{settings.EnvTelegramToken, settings.EnvTelegramTokenFile}
	for _, bot := range cfg.BotNames() {
		if bot != keys.DefaultBot {
			vars = append(vars, settings.BotTokenEnv(bot), settings.BotTokenFileEnv(bot))
		}
	}
	for _, name := range vars {
		if getenv != nil && getenv(name) != "" {
			return errors.New(name + " is set in the producer's environment; only workers need the bot token: remove it from .env (docker compose gives it to the workers as a secret)")
		}
	}
	if err := cfg.ValidateServe(); err != nil {
		return err
	}
	return checkProducerFiles(cfg)
}

// checkProducerFiles loads what the producer reads from files, with the
// code that loads them to serve: the secrets and the tokens file
// (readProducerSecrets), the routing file with its schedules, escalation
// policies and generic webhooks (LoadRoutes), the webhook receivers'
// secrets, and the feed list of HERALD_FEEDS_FILE when set (as `producer
// feeds` reads it). Every file at fault is reported.
func checkProducerFiles(cfg settings.Producer) error {
	var errs []error
	sec, err := readProducerSecrets(cfg)
	errs = append(errs, err)
	if _, err := LoadRoutes(cfg); err != nil {
		errs = append(errs, err)
	}
	if err == nil {
		s := surfaces{cfg: cfg, sec: sec, dispatcher: unrouted{}, log: slog.New(slog.DiscardHandler)}
		_, err := webhooks.Handler(s.webhooks())
		errs = append(errs, err)
	}
	if cfg.Feeds.Path != "" {
		_, err := feeds.LoadConfig(cfg.Feeds.Path)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// botTokenShape is what @BotFather hands out: the bot's numeric id, a colon
// and a secret of about 35 characters.
var botTokenShape = regexp.MustCompile(`^[0-9]{5,}:[A-Za-z0-9_-]{30,}$`)

// CheckWorker reports whether a worker would start with cfg as far as its
// settings go, for every bot HERALD_BOTS lists: its token is set and
// readable, and, for Telegram's own Bot API, shaped like a bot token (a
// fake or self-hosted API may take any). Every bot at fault is reported.
// It uses no network (`worker check`).
func CheckWorker(cfg settings.Worker) error {
	if _, err := NewSenders(cfg); err != nil {
		return err
	}
	if strings.TrimRight(cfg.Telegram.Client.APIURL, "/") != telegram.DefaultAPIURL {
		return nil
	}
	var errs []error
	for _, name := range cfg.BotNames() {
		token, err := cfg.BotToken(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !botTokenShape.MatchString(token) {
			src := settings.BotTokenEnv(name)
			if file := tokenFile(cfg, name); file != "" {
				src = settings.BotTokenFileEnv(name) + " (" + file + ")"
			}
			// Never echo the token, not even a part of it.
			errs = append(errs, errors.New(src+": the bot token is not shaped like one (digits, a colon, then about 35 letters, digits, _ or -); copy it from @BotFather"))
		}
	}
	return errors.Join(errs...)
}

// tokenFile is the file the token of the bot called name is read from, ""
// when it is given directly.
func tokenFile(cfg settings.Worker, name string) string {
	if name == keys.DefaultBot {
		return cfg.Telegram.TokenFile
	}
	return cfg.BotTokens[name].TokenFile
}
