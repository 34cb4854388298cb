package interact

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// SecretHeader is the header in which Telegram sends a webhook's secret
// token.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// webhookPath is the path of a bot's webhook on the producer.
func webhookPath(bot string) string { return "/telegram/" + bot + "/updates" }

// WebhookPattern is the producer's route of the webhooks (net/http
// ServeMux syntax).
const WebhookPattern = "POST /telegram/{bot}/updates"

// webhookURL is the webhook of bot on the producer at base (such as
// https://herald.example.com).
func webhookURL(base, bot string) string { return strings.TrimRight(base, "/") + webhookPath(bot) }

// defaultMaxUpdateBytes bounds the body of one webhook post: an update
// carrying a callback query is a few kilobytes at most.
const defaultMaxUpdateBytes = 1 << 20

// receiverConfig configures the webhook receiver.
type receiverConfig struct {
	// Tasks queues the updates. Required.
	Tasks *tasks
	// Secret is the secret token the workers gave Telegram with
	// setWebhook; a post without it is answered 401. Required: without it
	// anyone could press any button.
	Secret string
	// Bots are the bots whose updates are taken (HERALD_BOTS). Required.
	Bots []string
	// MaxBodyBytes bounds a post's body (default defaultMaxUpdateBytes).
	MaxBodyBytes int64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (c receiverConfig) withDefaults() receiverConfig {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = defaultMaxUpdateBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c receiverConfig) validate() error {
	var errs []error
	if c.Tasks == nil {
		errs = append(errs, errors.New("interact: ReceiverConfig.Tasks is required: it queues the updates"))
	}
	if err := CheckSecret(c.Secret); err != nil {
		errs = append(errs, fmt.Errorf("interact: ReceiverConfig.Secret: %w", err))
	}
	if len(c.Bots) == 0 {
		errs = append(errs, errors.New("interact: ReceiverConfig.Bots is required: the bots whose webhooks point here"))
	}
	for _, b := range c.Bots {
		if !keys.ValidBotName(b) {
			errs = append(errs, fmt.Errorf("interact: ReceiverConfig.Bots: %q is not a bot name", b))
		}
	}
	if c.MaxBodyBytes < 1<<10 {
		errs = append(errs, fmt.Errorf("interact: ReceiverConfig.MaxBodyBytes is %d; use at least 1 KiB (default %d)", c.MaxBodyBytes, defaultMaxUpdateBytes))
	}
	return errors.Join(errs...)
}

// CheckSecret checks a webhook secret token as Telegram does: 1 to 256
// characters A-Z, a-z, 0-9, _ and -.
func CheckSecret(s string) error {
	if s == "" || len(s) > 256 {
		return fmt.Errorf("must hold 1 to 256 characters, got %d", len(s))
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return errors.New("may only hold the characters A-Z, a-z, 0-9, _ and - (Telegram's rule for secret tokens)")
		}
	}
	return nil
}

// receiver serves the bots' webhooks on the producer: POST
// /telegram/{bot}/updates with the secret token in SecretHeader, compared
// in constant time. Each update is queued as a TypeUpdate task and
// answered 200 at once; the workers act on it. An update that could not be
// queued is answered 503, and Telegram posts it again.
type receiver struct {
	cfg receiverConfig
	log *slog.Logger
}

// newReceiver checks cfg and returns the receiver.
func newReceiver(cfg receiverConfig) (*receiver, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &receiver{cfg: cfg, log: cfg.Logger.With("component", "telegram_webhook")}, nil
}

// ServeHTTP implements http.Handler.
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed, "use POST"))
		return
	}
	if !httpapi.TokenMatches(r.Header.Get(SecretHeader), rc.cfg.Secret) {
		rc.log.Warn("webhook post without the right secret token refused", "remote", r.RemoteAddr, "path", r.URL.Path)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeUnauthorized,
			"missing or wrong "+SecretHeader+": only Telegram, with the secret the workers set, may post here"))
		return
	}
	bot, ok := botOfPath(r.URL.Path)
	if !ok || !slices.Contains(rc.cfg.Bots, bot) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no such bot: the path is /telegram/<bot>/updates for a bot HERALD_BOTS lists"))
		return
	}
	var u telegram.Update
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, rc.cfg.MaxBodyBytes))
	if err := dec.Decode(&u); err != nil {
		rc.log.Warn("unreadable webhook post refused", "bot", bot, "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "the body is not a Telegram update: %v", err))
		return
	}
	dup, err := rc.cfg.Tasks.Enqueue(r.Context(), bot, viaWebhook, u)
	if err != nil {
		rc.log.Warn("could not queue a webhook update; Telegram will post it again", "bot", bot, "update_id", u.UpdateID, "error", err)
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "the queue is unavailable; try again"))
		return
	}
	rc.log.Debug("webhook update queued", "bot", bot, "update_id", u.UpdateID, "duplicate", dup)
	// An empty 200: a JSON body could be taken by Telegram for a method
	// call.
	w.WriteHeader(http.StatusOK)
}

// botOfPath reads the bot's name from /telegram/<bot>/updates.
func botOfPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/telegram/")
	if !ok {
		return "", false
	}
	bot, ok := strings.CutSuffix(rest, "/updates")
	if !ok || !keys.ValidBotName(bot) {
		return "", false
	}
	return bot, true
}
