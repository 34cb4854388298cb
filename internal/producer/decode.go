package producer

import (
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// messageRequest is the body of POST /v1/messages.
type messageRequest struct {
	// Chat is a numeric chat id, as a JSON string ("42", "-1001234567890")
	// or number (42, as Telegram's own API takes it), or an @channel.
	Chat httpapi.ChatRef `json:"chat"`
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
