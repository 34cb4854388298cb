package producer

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/herald-dev/herald/internal/jobs"
)

// messageRequest is the body of POST /v1/messages.
type messageRequest struct {
	// Chat is a numeric chat id, as a JSON string ("42", "-1001234567890")
	// or number (42, as Telegram's own API takes it), or an @channel.
	Chat chatRef `json:"chat"`
	// Bot names the bot that sends the message, one of HERALD_BOTS;
	// omitted, the bot "default".
	Bot                 string `json:"bot,omitempty"`
	Text                string `json:"text"`
	ParseMode           string `json:"parse_mode,omitempty"`
	DisableNotification bool   `json:"disable_notification,omitempty"`
	MessageThreadID     int    `json:"message_thread_id,omitempty"`
	DisableLinkPreview  bool   `json:"disable_link_preview,omitempty"`
	ProtectContent      bool   `json:"protect_content,omitempty"`
	IdempotencyKey      string `json:"idempotency_key,omitempty"`
	// Queue is "critical", "default" or "low" (or as configured).
	Queue string `json:"queue,omitempty"`
	// Coalesce lets the message wait for the chat's next digest instead of
	// going out alone; ignored on the critical queue.
	Coalesce bool `json:"coalesce,omitempty"`
	// Photo sends an image with the text as its caption: {"url": ...} for
	// Telegram to fetch, or {"data": base64, "name": ...} uploaded with
	// the request (within the body limit).
	Photo *jobs.Photo `json:"photo,omitempty"`
	// Buttons is an inline keyboard, by rows of {"text", "callback_data"
	// or "url"}.
	Buttons *jobs.Keyboard `json:"buttons,omitempty"`
	// Thread ties the message to others about one subject in the chat:
	// {"key", "mode": "open"|"reply"|"edit", "close"}.
	Thread *jobs.Thread `json:"thread,omitempty"`
	// CallbackURL receives the message's status events, signed per the
	// Standard Webhooks spec (docs/STATUS.md).
	CallbackURL string `json:"callback_url,omitempty"`
}

// chatRef is a chat as a client may send it: a JSON string (a numeric id or
// an @username) or a JSON integer. A number is kept as its decimal digits,
// so ids beyond 2^53 are not rounded; validation happens at enqueue.
type chatRef string

// JSONKind describes the accepted JSON forms in type errors.
func (chatRef) JSONKind() string { return "a string (chat id or @username) or a whole number" }

// UnmarshalJSON accepts a string or an integer literal.
func (c *chatRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = chatRef(s)
		return nil
	case string(b) == "null":
		return nil
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*c = chatRef(b)
		return nil
	}
	what := "value " + string(b)
	switch {
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		what = "number " + string(b)
	case string(b) == "true" || string(b) == "false":
		what = "bool"
	case len(b) > 0 && b[0] == '{':
		what = "object"
	case len(b) > 0 && b[0] == '[':
		what = "array"
	}
	return &json.UnmarshalTypeError{Value: what, Type: reflect.TypeFor[chatRef]()}
}
