package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
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
func (c *Client) Edit(ctx context.Context, e Edit) (Sent, error) {
	if err := ctx.Err(); err != nil {
		return Sent{}, err
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
		if te, ok := AsError(err); ok && te.Reason == ReasonNotModified {
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
}

// Name is how Herald shows the user: @username, else the first name, else
// the id.
func (u UpdateUser) Name() string {
	switch {
	case u.Username != "":
		return "@" + u.Username
	case u.FirstName != "":
		return u.FirstName
	}
	return strconv.FormatInt(u.ID, 10)
}

// CallbackQuery is a press of an inline keyboard button.
type CallbackQuery struct {
	ID      string     `json:"id"`
	From    UpdateUser `json:"from"`
	Data    string     `json:"data"`
	Message *struct {
		MessageID int `json:"message_id"`
		Chat      struct {
			ID int64 `json:"id"`
		} `json:"chat"`
		Text    string `json:"text,omitempty"`
		Caption string `json:"caption,omitempty"`
	} `json:"message,omitempty"`
}

// Update is one update from getUpdates or a webhook; Herald reads callback
// queries only.
type Update struct {
	UpdateID      int64          `json:"update_id"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// GetUpdates long-polls for updates after offset (the last update_id seen
// plus one, which also confirms those before it), waiting up to timeout
// for one to arrive; the wait is cut to stay within the client's Timeout.
// Only callback queries are asked for.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wait := max(min(timeout, c.timeout-2*time.Second), 0)
	p := tgbotapi.Params{
		"offset":          strconv.FormatInt(offset, 10),
		"timeout":         strconv.Itoa(int(wait / time.Second)),
		"allowed_updates": `["callback_query"]`,
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

// SetWebhook asks Telegram to POST the bot's callback queries to url, with
// secret in the X-Telegram-Bot-Api-Secret-Token header.
func (c *Client) SetWebhook(ctx context.Context, url, secret string) error {
	p := tgbotapi.Params{"url": url, "allowed_updates": `["callback_query"]`}
	p.AddNonEmpty("secret_token", secret)
	_, err := c.call(ctx, "setWebhook", p)
	return err
}

// DeleteWebhook turns the webhook off, so that getUpdates works again.
func (c *Client) DeleteWebhook(ctx context.Context) error {
	_, err := c.call(ctx, "deleteWebhook", nil)
	return err
}
