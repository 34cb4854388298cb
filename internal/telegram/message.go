package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/herald-dev/herald/internal/keys"
)

// Parse modes accepted in Message.ParseMode.
const (
	parseModeNone       = ""
	parseModeHTML       = "HTML"
	parseModeMarkdownV2 = "MarkdownV2"
)

// Message is one text message to send.
type Message struct {
	// Chat is a numeric chat id ("123", "-100123") or a public
	// "@channelname".
	Chat string
	// Text is the message body; it must not be blank.
	Text string
	// ParseMode is "", "HTML" or "MarkdownV2".
	ParseMode string
	// DisableNotification delivers the message silently.
	DisableNotification bool
	// ProtectContent stops forwarding and saving of the message.
	ProtectContent bool
	// MessageThreadID targets a forum topic; 0 means the general chat.
	MessageThreadID int
	// DisableLinkPreview turns off the preview of the first link.
	DisableLinkPreview bool
	// ReplyTo is the id of a message of the same chat that this one
	// answers; 0 for none. If that message is gone, Telegram delivers this
	// one as a plain message (allow_sending_without_reply).
	ReplyTo int
	// Keyboard is an inline keyboard shown under the message, by rows.
	Keyboard [][]Button
	// Photo, when set, sends a photo (sendPhoto) with Text, which may then
	// be blank, as its caption: at most MaxCaption characters.
	Photo *Photo
	// AllowPaidBroadcast sends the message as a paid broadcast
	// (allow_paid_broadcast, Bot API 7.11): the bot may send up to 1000
	// messages a second, those beyond the free limit costing 0.1 Telegram
	// Stars each. A refusal of the paid broadcast itself is
	// ReasonPaidRefused.
	AllowPaidBroadcast bool
}

// MaxCaption is the longest caption Telegram accepts on a photo, in
// characters after entity parsing (the text limit is 4096).
const MaxCaption = 1024

// Button is one button of an inline keyboard: it sends Data back to the
// bot as a callback query (at most 64 bytes), or opens URL.
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Photo is the image of a photo message: an HTTP URL that Telegram fetches
// itself, or the bytes of a file uploaded with the request.
type Photo struct {
	URL  string
	Data []byte
	// Name is the uploaded file's name; default "photo.jpg".
	Name string
}

// maxPhotoUpload is the largest photo Telegram accepts as an upload.
const maxPhotoUpload = 10 << 20

// keyboardJSON is the reply_markup of an inline keyboard.
func keyboardJSON(rows [][]Button) (string, *Error) {
	for _, row := range rows {
		for _, b := range row {
			switch {
			case strings.TrimSpace(b.Text) == "":
				return "", invalid("a keyboard button has no text")
			case (b.Data == "") == (b.URL == ""):
				return "", invalid(fmt.Sprintf("keyboard button %q needs exactly one of callback data and URL", b.Text))
			case len(b.Data) > 64:
				return "", invalid(fmt.Sprintf("keyboard button %q carries %d bytes of callback data; Telegram allows 64", b.Text, len(b.Data)))
			}
		}
	}
	body, err := json.Marshal(struct {
		Rows [][]Button `json:"inline_keyboard"`
	}{rows})
	if err != nil {
		return "", invalid("keyboard: " + err.Error())
	}
	return string(body), nil
}

// Sent identifies a delivered message.
type Sent struct {
	// MessageID is the id Telegram gave the message within its chat.
	MessageID int
	// ChatID is the numeric id of the chat, also when Message.Chat was an
	// @name.
	ChatID int64
}

// params validates m and turns it into sendMessage form fields. Problems
// are reported as ReasonBadRequest with Code 0, since Telegram would reject
// the message too.
func (m Message) params() (tgbotapi.Params, *Error) {
	chat, err := normalizeChat(m.Chat)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(m.Text) == "" && m.Photo == nil {
		return nil, invalid("Message.Text is blank; Telegram rejects empty messages")
	}
	switch m.ParseMode {
	case parseModeNone, parseModeHTML, parseModeMarkdownV2:
	default:
		return nil, invalid(fmt.Sprintf("Message.ParseMode %q is not supported; use %q, %q or %q",
			m.ParseMode, parseModeNone, parseModeHTML, parseModeMarkdownV2))
	}
	if m.MessageThreadID < 0 {
		return nil, invalid(fmt.Sprintf("Message.MessageThreadID is %d; use a forum topic id or 0", m.MessageThreadID))
	}

	p := tgbotapi.Params{"chat_id": chat}
	if m.Photo != nil {
		switch {
		case (m.Photo.URL == "") == (len(m.Photo.Data) == 0):
			return nil, invalid("Message.Photo needs exactly one of URL and Data")
		case len(m.Photo.Data) > maxPhotoUpload:
			return nil, invalid(fmt.Sprintf("Message.Photo is %d bytes; Telegram accepts photo uploads of at most %d", len(m.Photo.Data), maxPhotoUpload))
		case m.Photo.URL != "":
			p["photo"] = m.Photo.URL
		}
		p.AddNonEmpty("caption", m.Text)
	} else {
		p["text"] = m.Text
	}
	p.AddNonEmpty("parse_mode", m.ParseMode)
	if m.ReplyTo > 0 {
		p["reply_parameters"] = fmt.Sprintf(`{"message_id":%d,"allow_sending_without_reply":true}`, m.ReplyTo)
	}
	if len(m.Keyboard) > 0 {
		kb, err := keyboardJSON(m.Keyboard)
		if err != nil {
			return nil, err
		}
		p["reply_markup"] = kb
	}
	p.AddBool("disable_notification", m.DisableNotification)
	p.AddBool("protect_content", m.ProtectContent)
	p.AddBool("allow_paid_broadcast", m.AllowPaidBroadcast)
	p.AddNonZero("message_thread_id", m.MessageThreadID)
	if m.DisableLinkPreview {
		// Older Bot API servers know only the first field, newer ones
		// prefer the second; sending both works with either.
		p["disable_web_page_preview"] = "true"
		p["link_preview_options"] = `{"is_disabled":true}`
	}
	return p, nil
}

// normalizeChat checks a chat reference (keys.ParseChat) and returns the
// form sent to Telegram: a canonical decimal id or the @name unchanged.
func normalizeChat(chat string) (string, *Error) {
	c, err := keys.ParseChat(chat)
	switch {
	case errors.Is(err, keys.ErrUsername):
		return "", invalid(fmt.Sprintf("Message.Chat %q is not a valid @username (%s)", chat, keys.UsernameRule))
	case err != nil:
		return "", invalid(fmt.Sprintf("Message.Chat %q is neither a numeric chat id (e.g. -100123) nor an @channelname", chat))
	}
	return c, nil
}

// invalid builds the error for a message refused before sending.
func invalid(desc string) *Error {
	return &Error{Reason: ReasonBadRequest, Description: desc}
}
