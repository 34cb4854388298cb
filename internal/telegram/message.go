package telegram

import (
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Parse modes accepted in Message.ParseMode.
const (
	ParseModeNone       = ""
	ParseModeHTML       = "HTML"
	ParseModeMarkdownV2 = "MarkdownV2"
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
	if strings.TrimSpace(m.Text) == "" {
		return nil, invalid("Message.Text is blank; Telegram rejects empty messages")
	}
	switch m.ParseMode {
	case ParseModeNone, ParseModeHTML, ParseModeMarkdownV2:
	default:
		return nil, invalid(fmt.Sprintf("Message.ParseMode %q is not supported; use %q, %q or %q",
			m.ParseMode, ParseModeNone, ParseModeHTML, ParseModeMarkdownV2))
	}
	if m.MessageThreadID < 0 {
		return nil, invalid(fmt.Sprintf("Message.MessageThreadID is %d; use a forum topic id or 0", m.MessageThreadID))
	}

	p := tgbotapi.Params{"chat_id": chat, "text": m.Text}
	p.AddNonEmpty("parse_mode", m.ParseMode)
	p.AddBool("disable_notification", m.DisableNotification)
	p.AddBool("protect_content", m.ProtectContent)
	p.AddNonZero("message_thread_id", m.MessageThreadID)
	if m.DisableLinkPreview {
		// Older Bot API servers know only the first field, newer ones
		// prefer the second; sending both works with either.
		p["disable_web_page_preview"] = "true"
		p["link_preview_options"] = `{"is_disabled":true}`
	}
	return p, nil
}

// normalizeChat checks a chat reference and returns the form sent to
// Telegram: a canonical decimal id or the @name unchanged.
func normalizeChat(chat string) (string, *Error) {
	if name, ok := strings.CutPrefix(chat, "@"); ok {
		if name == "" || len(name) > 64 || strings.IndexFunc(name, notUsernameRune) >= 0 {
			return "", invalid(fmt.Sprintf("Message.Chat %q is not a valid @username; use letters, digits and '_' after '@'", chat))
		}
		return chat, nil
	}
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil || id == 0 {
		return "", invalid(fmt.Sprintf("Message.Chat %q is neither a numeric chat id (e.g. -100123) nor an @channelname", chat))
	}
	return strconv.FormatInt(id, 10), nil
}

func notUsernameRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_')
}

// invalid builds the error for a message refused before sending.
func invalid(desc string) *Error {
	return &Error{Reason: ReasonBadRequest, Description: desc}
}
