package interact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// Defaults of registrarConfig.
const (
	defaultRegisterRetry    = 2 * time.Second
	defaultRegisterRetryCap = time.Minute
)

// registrarConfig configures a registrar.
type registrarConfig struct {
	// Bots are the bots whose webhooks to set, by name. Required.
	Bots map[string]bot
	// BaseURL is the producer's public base URL (https://...); each bot's
	// webhook is webhookURL(BaseURL, bot). Required.
	BaseURL string
	// Secret is the secret token Telegram sends with every post (see
	// CheckSecret). Required.
	Secret string
	// Retry and RetryCap shape the retries of a failed setWebhook
	// (defaults defaultRegisterRetry and defaultRegisterRetryCap); a 429
	// waits what Telegram asks.
	Retry, RetryCap time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (c registrarConfig) withDefaults() registrarConfig {
	if c.Retry == 0 {
		c.Retry = defaultRegisterRetry
	}
	if c.RetryCap == 0 {
		c.RetryCap = defaultRegisterRetryCap
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c registrarConfig) validate() error {
	var errs []error
	if len(c.Bots) == 0 {
		errs = append(errs, errors.New("interact: RegistrarConfig.Bots is required"))
	}
	for name, b := range c.Bots {
		if b == nil || !keys.ValidBotName(name) {
			errs = append(errs, fmt.Errorf("interact: RegistrarConfig.Bots[%q] is nil or not a bot name", name))
		}
	}
	if err := CheckBaseURL(c.BaseURL); err != nil {
		errs = append(errs, fmt.Errorf("interact: RegistrarConfig.BaseURL: %w", err))
	}
	if err := CheckSecret(c.Secret); err != nil {
		errs = append(errs, fmt.Errorf("interact: RegistrarConfig.Secret: %w", err))
	}
	if c.Retry <= 0 || c.RetryCap < c.Retry {
		errs = append(errs, fmt.Errorf("interact: RegistrarConfig.Retry (%v) must be positive and at most RetryCap (%v)", c.Retry, c.RetryCap))
	}
	return errors.Join(errs...)
}

// CheckBaseURL checks the producer's base URL for webhooks: http or https
// (Telegram itself requires https), a host, no query or fragment.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Errorf("must be the producer's public base URL such as https://herald.example.com, got %q", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("must be a plain base URL without user, query or fragment, got %q", u.Redacted())
	}
	return nil
}

// registrar points each bot's webhook at the producer when the worker
// starts (setWebhook with the secret token), retrying until Telegram takes
// it. Every worker of the fleet does so; the calls after the first change
// nothing.
type registrar struct {
	cfg registrarConfig
	log *slog.Logger

	loops background.Group
}

// newRegistrar checks cfg and returns a registrar; Start runs it.
func newRegistrar(cfg registrarConfig) (*registrar, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &registrar{cfg: cfg, log: cfg.Logger.With("component", "webhook_registrar")}, nil
}

// Start sets the webhooks in the background and returns at once.
func (r *registrar) Start(ctx context.Context) error {
	loops := make([]func(context.Context), 0, len(r.cfg.Bots))
	for name, bot := range r.cfg.Bots {
		loops = append(loops, func(ctx context.Context) { r.register(ctx, name, bot) })
	}
	if err := r.loops.Start(ctx, loops...); err != nil {
		return fmt.Errorf("interact: Registrar %w", err)
	}
	return nil
}

// Shutdown stops the retries and waits for them.
func (r *registrar) Shutdown() { r.loops.Shutdown() }

// register calls setWebhook for one bot until it succeeds or ctx ends.
func (r *registrar) register(ctx context.Context, name string, bot bot) {
	hook := webhookURL(r.cfg.BaseURL, name)
	log := r.log.With("bot", name, "url", hook)
	wait := r.cfg.Retry
	for ctx.Err() == nil {
		err := bot.SetWebhook(ctx, hook, r.cfg.Secret)
		if err == nil {
			log.Info("webhook set: Telegram posts the bot's button presses to the producer")
			return
		}
		if ctx.Err() != nil {
			return
		}
		d := wait
		te, _ := telegram.AsError(err)
		if te != nil && te.RetryAfter > 0 {
			// Another worker set it a moment ago (Telegram allows one
			// setWebhook a second); this call confirms it.
			d = te.RetryAfter
			log.Debug("setWebhook rate limited; trying again", "retry_after", d)
		} else {
			log.Error("could not set the webhook; trying again", "error", err, "retry_in", d)
			wait = min(2*wait, r.cfg.RetryCap)
		}
		sleep(ctx, d)
	}
}
