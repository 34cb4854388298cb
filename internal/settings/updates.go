package settings

import (
	"errors"
	"strconv"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/interact"
)

// Settings of button presses (internal/interact, docs/BUTTONS.md).
const (
	EnvTelegramUpdates           = "HERALD_TELEGRAM_UPDATES"
	EnvTelegramWebhookURL        = "HERALD_TELEGRAM_WEBHOOK_URL"
	EnvTelegramWebhookSecret     = "HERALD_TELEGRAM_WEBHOOK_SECRET"
	EnvTelegramWebhookSecretFile = "HERALD_TELEGRAM_WEBHOOK_SECRET_FILE"
)

// Updates says how the fleet receives the presses of alert buttons
// (Telegram's callback queries).
type Updates struct {
	// Off stops the fleet from receiving presses
	// (HERALD_TELEGRAM_UPDATES=false; default true, presses are received):
	// nobody in the fleet reads the bots' updates, and another program may
	// use them. Otherwise presses come by webhook when WebhookURL is set,
	// else by getUpdates from one worker of the fleet at a time.
	Off bool
	// WebhookURL is the producer's public base URL
	// (HERALD_TELEGRAM_WEBHOOK_URL, e.g. https://herald.example.com): the
	// workers point each bot's webhook at <url>/telegram/<bot>/updates.
	// Empty: getUpdates.
	WebhookURL string
	// WebhookSecret is the secret token Telegram sends with each webhook
	// post (HERALD_TELEGRAM_WEBHOOK_SECRET or _FILE); required with
	// WebhookURL, and the producers need the same.
	WebhookSecret, WebhookSecretFile string
}

// secret returns the webhook's secret token, reading its file when set.
func (u Updates) secret() (string, error) {
	return config.SecretPair(u.WebhookSecret, u.WebhookSecretFile, EnvTelegramWebhookSecret, EnvTelegramWebhookSecretFile)
}

// validate checks the webhook's URL and secret.
func (u Updates) validate(p *config.Problems) {
	config.ValidateSecretPair(p, u.WebhookSecret, u.WebhookSecretFile, EnvTelegramWebhookSecret, EnvTelegramWebhookSecretFile)
	if u.WebhookURL == "" {
		return
	}
	if u.Off {
		p.Add(EnvTelegramWebhookURL, "is set but %s is off; turn presses on or remove the URL", config.Ref(EnvTelegramUpdates))
	}
	if err := interact.CheckBaseURL(u.WebhookURL); err != nil {
		p.Add(EnvTelegramWebhookURL, "%v", err)
	}
	validateWebhookSecret(p, u.WebhookSecret, u.WebhookSecretFile, true)
}

// validateWebhookSecret checks the webhook secret's characters (Telegram's
// rule) when it is set, and that it is set when required.
func validateWebhookSecret(p *config.Problems, value, file string, required bool) {
	s, err := config.SecretPair(value, file, EnvTelegramWebhookSecret, EnvTelegramWebhookSecretFile)
	switch {
	case err != nil:
		return // validateSecretPair reported it
	case s == "" && required:
		p.Add(EnvTelegramWebhookSecret, "is required with %s (or set %s): Telegram sends it with every post, and the producer refuses posts without it",
			config.Ref(EnvTelegramWebhookURL), EnvTelegramWebhookSecretFile)
	case s != "":
		if err := interact.CheckSecret(s); err != nil {
			p.Add(EnvTelegramWebhookSecret, "%v", err)
		}
	}
}

// WebhookSecretValue returns the webhook's secret token, reading its file
// when set; "" when none is set.
func (u Updates) WebhookSecretValue() (string, error) { return u.secret() }

// TelegramWebhookSecret returns the producer's webhook secret token,
// reading its file when set; "" (the route is not served) when none is set.
func (p Producer) TelegramWebhookSecret() (string, error) {
	return config.SecretPair(p.TelegramSecret, p.TelegramSecretFile, EnvTelegramWebhookSecret, EnvTelegramWebhookSecretFile)
}

// updatesSpecs are the worker's settings of button presses.
func updatesSpecs(u *Updates) []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvTelegramUpdates, "true", "Receive presses of alert buttons: by webhook when "+EnvTelegramWebhookURL+
			" is set, else by getUpdates from one worker of the fleet at a time. false leaves the bots' updates alone.",
			onVar(&u.Off)),
		config.NewSpec(EnvTelegramWebhookURL, "", "The producer's public base URL; each bot's webhook is set to <url>/telegram/<bot>/updates instead of polling.",
			config.BaseURLVar(&u.WebhookURL)),
		config.SecretSpec(EnvTelegramWebhookSecret, "Secret token of the webhooks (A-Z, a-z, 0-9, _ and -); required with "+EnvTelegramWebhookURL+
			", and the producers need the same.", config.StringVar(&u.WebhookSecret)),
		config.NewSpec(EnvTelegramWebhookSecretFile, "", "File holding the webhook secret token.", config.StringVar(&u.WebhookSecretFile)),
	}
}

// onVar is a true/false setting stored inverted in off, so that the zero
// value of the field is the setting's default, true.
func onVar(off *bool) config.Binding {
	return config.Binding{
		Boolean: true,
		Set: func(s string) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errors.New("must be true or false")
			}
			*off = !b
			return nil
		},
		Get: func() string { return strconv.FormatBool(!*off) },
	}
}
