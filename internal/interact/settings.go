package interact

import (
	"strconv"

	"github.com/herald-dev/herald/internal/config"
)

// The settings of button presses (docs/BUTTONS.md).
const (
	EnvUpdates           = "HERALD_TELEGRAM_UPDATES"
	EnvWebhookURL        = "HERALD_TELEGRAM_WEBHOOK_URL"
	EnvWebhookSecret     = "HERALD_TELEGRAM_WEBHOOK_SECRET"
	EnvWebhookSecretFile = "HERALD_TELEGRAM_WEBHOOK_SECRET_FILE"
)

// WebhookSecret is the secret token Telegram sends with each webhook post
// (HERALD_TELEGRAM_WEBHOOK_SECRET or _FILE): the workers set it on the
// bots' webhooks, the producers check it.
type WebhookSecret struct {
	Secret, SecretFile string
}

// Value returns the secret, reading SecretFile when set; "" when neither
// is set.
func (s WebhookSecret) Value() (string, error) {
	return config.SecretPair(s.Secret, s.SecretFile, EnvWebhookSecret, EnvWebhookSecretFile)
}

// specs binds the secret and its file to s; help describes the secret.
func (s *WebhookSecret) specs(help string) []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvWebhookSecret, help, config.StringVar(&s.Secret)),
		config.NewSpec(EnvWebhookSecretFile, "", "File holding the webhook secret token.", config.StringVar(&s.SecretFile)),
	}
}

// check reports a secret given twice or unreadable, one Telegram would
// refuse, and none when required.
func (s WebhookSecret) check(p *config.Problems, required bool) {
	config.ValidateSecretPair(p, s.Secret, s.SecretFile, EnvWebhookSecret, EnvWebhookSecretFile)
	v, err := s.Value()
	switch {
	case err != nil:
		return // ValidateSecretPair reported it
	case v == "" && required:
		p.Add(EnvWebhookSecret, "is required with %s (or set %s): Telegram sends it with every post, and the producer refuses posts without it",
			config.Ref(EnvWebhookURL), EnvWebhookSecretFile)
	case v != "":
		if err := CheckSecret(v); err != nil {
			p.Add(EnvWebhookSecret, "%v", err)
		}
	}
}

// ReceiverSettings are the producer's settings of the bots' webhooks.
type ReceiverSettings struct {
	// WebhookSecret, when set, has the producer take button presses at
	// POST /telegram/<bot>/updates.
	WebhookSecret
}

// Specs binds the producer's webhook secret to c.
func (c *ReceiverSettings) Specs() []config.Spec {
	return c.specs("Secret token of the bots' webhooks, as the workers set it; when set, POST /telegram/<bot>/updates takes button presses.")
}

// Check reports every problem of the producer's webhook secret.
func (c ReceiverSettings) Check(p *config.Problems) { c.check(p, false) }

// UpdatesConfig says how the fleet's workers receive the presses of alert
// buttons (Telegram's callback queries).
type UpdatesConfig struct {
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
	// WebhookSecret is required with WebhookURL, and the producers need
	// the same.
	WebhookSecret
}

// Specs binds the worker's settings of button presses to c.
func (c *UpdatesConfig) Specs() []config.Spec {
	return append([]config.Spec{
		config.NewSpec(EnvUpdates, "true", "Receive presses of alert buttons: by webhook when "+EnvWebhookURL+
			" is set, else by getUpdates from one worker of the fleet at a time. false leaves the bots' updates alone.",
			onVar(&c.Off)),
		config.NewSpec(EnvWebhookURL, "", "The producer's public base URL; each bot's webhook is set to <url>/telegram/<bot>/updates instead of polling.",
			config.BaseURLVar(&c.WebhookURL)),
	}, c.specs("Secret token of the webhooks (A-Z, a-z, 0-9, _ and -); required with "+EnvWebhookURL+
		", and the producers need the same.")...)
}

// Check reports every problem of the worker's settings of button presses.
func (c UpdatesConfig) Check(p *config.Problems) {
	if c.WebhookURL == "" {
		config.ValidateSecretPair(p, c.Secret, c.SecretFile, EnvWebhookSecret, EnvWebhookSecretFile)
		return
	}
	if c.Off {
		p.Add(EnvWebhookURL, "is set but %s is off; turn presses on or remove the URL", config.Ref(EnvUpdates))
	}
	if err := CheckBaseURL(c.WebhookURL); err != nil {
		p.Add(EnvWebhookURL, "%v", err)
	}
	c.check(p, true)
}

// onVar is a true/false setting stored inverted in off, so that the zero
// value of the field is the setting's default, true. It parses as
// config.BoolVar does.
func onVar(off *bool) config.Binding {
	var on bool
	b := config.BoolVar(&on)
	parse := b.Set
	b.Set = func(s string) error {
		if err := parse(s); err != nil {
			return err
		}
		*off = !on
		return nil
	}
	b.Get = func() string { return strconv.FormatBool(!*off) }
	return b
}
