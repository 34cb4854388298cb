package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
)

// TypeSendMessage is the asynq task type of a SendMessage task.
const TypeSendMessage = "telegram:send_message"

// PayloadVersion is the payload version this build writes. Workers refuse
// payloads from a newer version (archived with a reason) rather than guess.
const PayloadVersion = 1

// DefaultMaxRetry is the retry budget of a task that names none.
const DefaultMaxRetry = 25

// DefaultMaxTextLen bounds a message's text, in UTF-16 code units. Texts longer
// than Telegram's 4096 are split by the worker into several messages.
const DefaultMaxTextLen = 32768

// SendMessage is one message to deliver to one chat. Its JSON form is the task
// payload stored in Redis and shown in the web UI.
type SendMessage struct {
	// V is the payload version; zero means PayloadVersion.
	V int `json:"v"`
	// Chat is a numeric chat id ("123", "-100123") or a public @username.
	Chat string `json:"chat"`
	// Bot names the bot that sends the message ("" or "default": the
	// default bot).
	Bot string `json:"bot,omitempty"`
	// Text is the message body, formatted per ParseMode.
	Text string `json:"text"`
	// ParseMode is "", "HTML" or "MarkdownV2".
	ParseMode           string `json:"parse_mode,omitempty"`
	DisableNotification bool   `json:"disable_notification,omitempty"`
	// MessageThreadID targets a forum topic in a supergroup.
	MessageThreadID    int  `json:"message_thread_id,omitempty"`
	DisableLinkPreview bool `json:"disable_link_preview,omitempty"`
	ProtectContent     bool `json:"protect_content,omitempty"`
	// MaxRetry is how many failed attempts after the first are allowed
	// before the task is archived; nil means DefaultMaxRetry. The worker
	// enforces it (rate-limit waits never count).
	MaxRetry *int `json:"max_retry,omitempty"`
	// IdempotencyKey, when set, makes a repeated enqueue within the
	// idempotency window a no-op.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// CreatedAt is when the producer accepted the message.
	CreatedAt time.Time `json:"created_at"`
	// From names the token that sent the message through the API ("" for
	// the messages Herald makes itself: alerts, heartbeats, feeds). The
	// producer sets it from the request's credential, never from its body;
	// a send-scope token may read and cancel only its own messages.
	From string `json:"from,omitempty"`
	// CallbackURL receives the message's status events (message.sent,
	// message.failed, ...), signed per the Standard Webhooks spec; "" for
	// none.
	CallbackURL string `json:"callback_url,omitempty"`
	// Paid says the token that sent the message may spend the bot's Stars:
	// only then may the worker send it as a paid broadcast
	// (allow_paid_broadcast). Herald's own messages (From "") may.
	Paid bool `json:"paid,omitempty"`
	// Thread ties the message to earlier ones about the same subject in
	// the same chat (an alert's firing message): it opens a thread, or
	// replies to or edits the thread's first message (see Thread).
	Thread *Thread `json:"thread,omitempty"`
	// Photo, when set, is sent with the text as its caption (sendPhoto);
	// text beyond Telegram's caption limit follows as replies. Text may
	// then be blank.
	Photo *Photo `json:"photo,omitempty"`
	// Buttons is an inline keyboard shown under the message, by rows (a
	// pointer so that messages stay comparable).
	Buttons *Keyboard `json:"buttons,omitempty"`
}

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// ValidationError lists every invalid field, so a client fixes them at once.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return "invalid message: " + strings.Join(parts, "; ")
}

func (e *ValidationError) add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// MaxChatBytes bounds a chat reference as given, spaces included: the
// longest @username is 33 bytes and the longest id 20, so only padding
// goes past it. It lets a list of chats be judged as it arrives
// (httpapi.Bound.MaxEntryBytes).
const MaxChatBytes = 256

// ValidateChat checks a chat reference (keys.ParseChat, spaces trimmed)
// and returns it normalised.
func ValidateChat(chat string) (string, error) {
	if len(chat) > MaxChatBytes {
		return "", fmt.Errorf("is %d bytes long; a chat id or @username is at most %d, spaces included", len(chat), MaxChatBytes)
	}
	chat = strings.TrimSpace(chat)
	c, err := keys.ParseChat(chat)
	switch {
	case errors.Is(err, keys.ErrNoChat):
		return "", fmt.Errorf("is required: a numeric chat id or an @channel username")
	case errors.Is(err, keys.ErrUsername):
		return "", fmt.Errorf("%q is not a valid @username (%s)", chat, keys.UsernameRule)
	case err != nil:
		return "", fmt.Errorf("%q is neither a numeric chat id nor an @username", chat)
	}
	return c, nil
}

// Limits bound what Validate accepts.
type Limits struct {
	// Bots are the names of the bots a message may name; nil accepts any
	// well-formed name (the worker, which reports a bot it does not serve
	// itself). A message naming none goes to keys.DefaultBot, which must
	// then be listed.
	Bots []string
	// MaxTextLen in UTF-16 code units; 0 means DefaultMaxTextLen.
	MaxTextLen int
}

// Normalize fills defaults and canonical forms (version, chat spelling, parse
// mode casing, creation time) and validates the result (Validate).
func (m *SendMessage) Normalize(lim Limits, now time.Time) error {
	m.normalize(now)
	return m.Validate(lim)
}

// normalize fills defaults and canonical forms.
func (m *SendMessage) normalize(now time.Time) {
	if m.V == 0 {
		m.V = PayloadVersion
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now.UTC()
	}
	if c, err := ValidateChat(m.Chat); err == nil {
		m.Chat = c
	}
	if m.Bot == keys.DefaultBot {
		m.Bot = "" // one spelling in payloads and group keys
	}
	if mode, err := markup.ParseMode(m.ParseMode); err == nil {
		m.ParseMode = string(mode)
	}
}

// Validate reports every invalid field. It checks a payload: the thread's
// key may carry its namespace (MaxThreadKey plus MaxThreadSpace bytes).
func (m *SendMessage) Validate(lim Limits) error { return m.validate(lim, maxStoredThreadKey) }

// validate reports every invalid field, with maxKey bounding the thread's
// key.
func (m *SendMessage) validate(lim Limits, maxKey int) error {
	maxLen := lim.MaxTextLen
	if maxLen <= 0 {
		maxLen = DefaultMaxTextLen
	}
	var verr ValidationError
	if m.V < 0 || m.V > PayloadVersion {
		verr.add("v", "payload version %d is not supported by this build (max %d): upgrade the worker", m.V, PayloadVersion)
	}
	if _, err := ValidateChat(m.Chat); err != nil {
		verr.add("chat", "%s", err.Error())
	}
	if msg := checkBot(m.Bot, lim.Bots); msg != "" {
		verr.add("bot", "%s", msg)
	}
	m.validateExtras(&verr, maxKey)
	if strings.TrimSpace(m.Text) == "" && m.Photo == nil {
		verr.add("text", "is required and must not be blank")
	} else if n := markup.UTF16Len(m.Text); n > maxLen {
		verr.add("text", "is %d UTF-16 code units long; the limit is %d", n, maxLen)
	}
	if _, err := markup.ParseMode(m.ParseMode); err != nil {
		verr.add("parse_mode", "%s", err.Error())
	}
	if m.MessageThreadID < 0 {
		verr.add("message_thread_id", "must be a positive forum topic id, got %d", m.MessageThreadID)
	}
	if m.MaxRetry != nil && *m.MaxRetry < 0 {
		verr.add("max_retry", "must be >= 0, got %d", *m.MaxRetry)
	}
	if len(m.IdempotencyKey) > 256 {
		verr.add("idempotency_key", "is %d bytes long; the limit is 256", len(m.IdempotencyKey))
	} else if !utf8.ValidString(m.IdempotencyKey) {
		// JSON would store it with U+FFFD in place of the bad bytes: a key
		// different from the one the client sent.
		verr.add("idempotency_key", "is not valid UTF-8")
	}
	if len(verr.Fields) > 0 {
		return &verr
	}
	return nil
}

// BotName is the name of the bot that sends m.
func (m SendMessage) BotName() string {
	if m.Bot == "" {
		return keys.DefaultBot
	}
	return m.Bot
}

// checkBot says what is wrong with a message's bot name given the known
// bots (nil: any well-formed name), or "" when nothing is.
func checkBot(bot string, known []string) string {
	if bot != "" && !keys.ValidBotName(bot) {
		return fmt.Sprintf("%q is not a bot name (1-%d lower-case letters, digits, _ or -, starting with a letter)", bot, keys.MaxBotName)
	}
	if known == nil {
		return ""
	}
	name := bot
	if name == "" {
		name = keys.DefaultBot
	}
	if slices.Contains(known, name) {
		return ""
	}
	if bot == "" {
		return "is required: this Herald has no default bot; its bots are " + strings.Join(known, ", ")
	}
	return fmt.Sprintf("%q is not a bot of this Herald; its bots are %s", bot, strings.Join(known, ", "))
}

// Encode returns the task payload.
func (m SendMessage) Encode() ([]byte, error) { return json.Marshal(m) }

// Decode parses and validates a task payload. Unknown fields are tolerated
// (a newer producer may add optional ones); a newer version is refused.
func Decode(payload []byte) (SendMessage, error) {
	var m SendMessage
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("payload is not a SendMessage JSON object: %w", err)
	}
	if m.V == 0 {
		m.V = PayloadVersion
	}
	// The producer enforced its own text limit; the worker only needs a
	// bound that keeps memory sane.
	if err := m.Validate(Limits{MaxTextLen: 1 << 20}); err != nil {
		return m, err
	}
	return m, nil
}

// MayPay reports whether m may go as a paid broadcast: Herald's own
// messages, and those of a token with the paid permission (Paid).
func (m SendMessage) MayPay() bool { return m.From == "" || m.Paid }
