package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// Edit changes a message the bot sent: its text (editMessageText), or the
// caption of a photo (editMessageCaption), and its inline keyboard.
type Edit struct {
	// Chat and MessageID name the message.
	Chat      string
	MessageID int
	// Text is the new text or caption; ParseMode as in Message.
	Text      string
	ParseMode string
	// Caption edits a photo's caption rather than a text message.
	Caption bool
	// Keyboard replaces the inline keyboard; nil removes it.
	Keyboard           [][]Button
	DisableLinkPreview bool
}

// Edit applies e. An edit that would change nothing ("message is not
// modified") succeeds: the message already reads as asked. A message that
// is gone or can no longer be edited fails with ReasonMessageGone; other
// failures are classified like Send's.
//
// Like Send, Edit needs the limiter's grant of a slot (ErrNoSlot without
// one); an edit cannot carry allow_paid_broadcast, so a slot given under
// the paid limit is refused too (ErrPaidSlot): the edit must fit the free
// windows.
func (c *Client) Edit(ctx context.Context, g ratelimit.Grant, e Edit) (Sent, error) {
	ctx, err := granted(ctx, g)
	if err != nil {
		return Sent{}, err
	}
	if g.Paid() {
		return Sent{}, ErrPaidSlot
	}
	chat, perr := normalizeChat(e.Chat)
	if perr != nil {
		return Sent{}, perr
	}
	if e.MessageID <= 0 {
		return Sent{}, invalid(fmt.Sprintf("Edit.MessageID is %d; name the message to edit", e.MessageID))
	}
	if strings.TrimSpace(e.Text) == "" && !e.Caption {
		return Sent{}, invalid("Edit.Text is blank; Telegram rejects empty messages")
	}
	p := tgbotapi.Params{"chat_id": chat, "message_id": strconv.Itoa(e.MessageID)}
	method := "editMessageText"
	if e.Caption {
		method = "editMessageCaption"
		p["caption"] = e.Text
	} else {
		p["text"] = e.Text
		if e.DisableLinkPreview {
			p["disable_web_page_preview"] = "true"
			p["link_preview_options"] = `{"is_disabled":true}`
		}
	}
	p.AddNonEmpty("parse_mode", e.ParseMode)
	if len(e.Keyboard) > 0 {
		kb, err := keyboardJSON(e.Keyboard)
		if err != nil {
			return Sent{}, err
		}
		p["reply_markup"] = kb
	}
	if _, err := c.call(ctx, method, p); err != nil {
		if te, ok := AsError(err); ok && te.Reason == reasonNotModified {
			return Sent{MessageID: e.MessageID}, nil
		}
		return Sent{}, err
	}
	return Sent{MessageID: e.MessageID}, nil
}

// AnswerCallback answers a callback query (answerCallbackQuery): text, if
// any, shows to the user who pressed the button, as an alert when alert is
// set. Telegram expects the answer within seconds of the press; a late or
// repeated one fails with ReasonBadRequest.
func (c *Client) AnswerCallback(ctx context.Context, queryID, text string, alert bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := tgbotapi.Params{"callback_query_id": queryID}
	p.AddNonEmpty("text", text)
	p.AddBool("show_alert", alert)
	_, err := c.call(ctx, "answerCallbackQuery", p)
	return err
}

// UpdateUser is a Telegram user as updates describe them.
type UpdateUser struct {
	ID        int64  `json:"id"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
}

// maxShownName bounds the names Name shows, in characters.
const maxShownName = 32

// Name is how Herald names the user in chats, answers and silences:
// "@username" when Telegram gives a username (Telegram vouches for it)
// that follows its rules (keys.ValidUsername), else the first and last
// name with the user id, "Alice Smith (id 42)".
// Names are anyone's to choose, so Name makes them unable to pass for a
// handle or for someone else: it drops every '@' (and its look-alikes),
// control and format characters (bidi overrides among them), joins
// whitespace into single spaces and keeps 32 characters. With no name
// left it is "user 42". The result is plain text, to escape for a parse
// mode like any other.
func (u UpdateUser) Name() string {
	if keys.ValidUsername(u.Username) {
		return "@" + u.Username
	}
	id := strconv.FormatInt(u.ID, 10)
	name := cleanName(u.FirstName + " " + u.LastName)
	if name == "" {
		return "user " + id
	}
	return name + " (id " + id + ")"
}

// cleanName is a user's chosen name as Name shows it.
func cleanName(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		switch {
		case c == '@' || c == '\uFF20' || c == '\uFE6B': // @, fullwidth and small @
		case unicode.IsSpace(c):
			space = b.Len() > 0
		case unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || c == utf8.RuneError:
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(c)
		}
	}
	if r := []rune(b.String()); len(r) > maxShownName {
		return strings.TrimRight(string(r[:maxShownName-1]), " ") + "…"
	}
	return b.String()
}

// CallbackQuery is a press of an inline keyboard button.
type CallbackQuery struct {
	ID   string     `json:"id"`
	From UpdateUser `json:"from"`
	Data string     `json:"data"`
	// Message is the message whose button was pressed; nil for a message
	// sent in inline mode (the query then has an inline_message_id).
	Message *callbackMessage `json:"message,omitempty"`
}

// callbackMessage is the message of a callback query, as far as Herald
// reads it.
type callbackMessage struct {
	MessageID int        `json:"message_id"`
	Chat      updateChat `json:"chat"`
	Text      string     `json:"text,omitempty"`
	Caption   string     `json:"caption,omitempty"`
}

// updateChat is the chat of a message in an update: its id, its type
// ("private", "group", "supergroup" or "channel") and, for a public chat,
// its username (without the '@').
type updateChat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type,omitempty"`
	Username string `json:"username,omitempty"`
}

// ChatMember is the bot's (or a user's) membership of a chat, as far as
// Herald reads it.
type ChatMember struct {
	// Status is "creator", "administrator", "member", "restricted",
	// "left" or "kicked".
	Status string     `json:"status"`
	User   UpdateUser `json:"user"`
	// IsMember tells, for "restricted", whether the user is in the chat.
	IsMember bool `json:"is_member,omitempty"`
}

// ChatMemberUpdated is a change of a chat member's status. In a
// my_chat_member update it is the bot's own: in a private chat the user
// blocked it (new status "kicked") or unblocked it ("member"); in a group
// or channel it was removed ("left", "kicked") or added back.
type ChatMemberUpdated struct {
	Chat updateChat `json:"chat"`
	// From is who made the change: the user, or a chat administrator.
	From UpdateUser `json:"from"`
	// Date is when, in Unix seconds.
	Date          int64      `json:"date"`
	OldChatMember ChatMember `json:"old_chat_member"`
	NewChatMember ChatMember `json:"new_chat_member"`
}

// Update is one update from getUpdates or a webhook; Herald reads callback
// queries, changes of the bot's own membership (my_chat_member) and
// messages, for the bot commands it answers (/oncall).
type Update struct {
	UpdateID      int64              `json:"update_id"`
	CallbackQuery *CallbackQuery     `json:"callback_query,omitempty"`
	MyChatMember  *ChatMemberUpdated `json:"my_chat_member,omitempty"`
	Message       *UpdateMessage     `json:"message,omitempty"`
}

// UpdateMessage is a message someone sent in a chat, as far as Herald
// reads it.
type UpdateMessage struct {
	MessageID int        `json:"message_id"`
	From      UpdateUser `json:"from"`
	Chat      updateChat `json:"chat"`
	Text      string     `json:"text,omitempty"`
	// ThreadID is the forum topic of a message in one (IsTopic set).
	ThreadID int  `json:"message_thread_id,omitempty"`
	IsTopic  bool `json:"is_topic_message,omitempty"`
}

// GetMe describes the bot itself (getMe): its id, name and username, to
// which commands in groups are addressed ("/oncall@username").
func (c *Client) GetMe(ctx context.Context) (UpdateUser, error) {
	if err := ctx.Err(); err != nil {
		return UpdateUser{}, err
	}
	result, err := c.call(ctx, "getMe", tgbotapi.Params{})
	if err != nil {
		return UpdateUser{}, err
	}
	var me UpdateUser
	if jerr := json.Unmarshal(result, &me); jerr != nil || me.ID == 0 {
		desc := "getMe result carries no user id"
		if jerr != nil {
			desc = "getMe result did not decode: " + c.Redact(jerr.Error())
		}
		return UpdateUser{}, &Error{Reason: ReasonServerError, Description: desc}
	}
	return me, nil
}

// allowedUpdates are the update types Herald asks Telegram for: presses,
// the bot's membership, and messages (in groups, a bot in privacy mode
// receives only commands).
const allowedUpdates = `["callback_query","my_chat_member","message"]`

// GetUpdates long-polls for updates after offset (the last update_id seen
// plus one, which also confirms those before it), waiting up to timeout
// for one to arrive; the wait is cut to stay within the client's Timeout.
// The update types of allowedUpdates are asked for.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wait := max(min(timeout, c.timeout-2*time.Second), 0)
	p := tgbotapi.Params{
		"offset":          strconv.FormatInt(offset, 10),
		"timeout":         strconv.Itoa(int(wait / time.Second)),
		"allowed_updates": allowedUpdates,
	}
	result, err := c.call(ctx, "getUpdates", p)
	if err != nil {
		return nil, err
	}
	var ups []Update
	if jerr := json.Unmarshal(result, &ups); jerr != nil {
		return nil, &Error{Reason: ReasonServerError, Description: "getUpdates result did not decode: " + c.Redact(jerr.Error())}
	}
	return ups, nil
}

// SetWebhook asks Telegram to POST the bot's updates of allowedUpdates
// to url, with secret in the X-Telegram-Bot-Api-Secret-Token header.
func (c *Client) SetWebhook(ctx context.Context, url, secret string) error {
	p := tgbotapi.Params{"url": url, "allowed_updates": allowedUpdates}
	p.AddNonEmpty("secret_token", secret)
	_, err := c.call(ctx, "setWebhook", p)
	return err
}
