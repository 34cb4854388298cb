package botapi

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// Telegram's descriptions of the mistakes the front refuses before storing
// (after "Bad Request: ").
const (
	descNoChat      = "chat_id is empty"
	descNoChatFound = "chat not found"
	descNoText      = "message text is empty"
	descTooLong     = "message is too long"
	descCaptionLong = "message caption is too long"
	descParseMode   = "unsupported parse_mode"
	descNoPhoto     = "there is no photo in the request"
	descBadPhoto    = "wrong file identifier/HTTP URL specified"
	descThread      = "message thread not found"
	descMarkupJSON  = "can't parse reply keyboard markup JSON object"
	descLinkPreview = "can't parse link preview options JSON object"
)

// method is what a send method takes: sendMessage's text, or sendPhoto's
// photo and caption.
type method struct {
	photo bool
}

// textParam is the parameter that carries the message's text.
func (m method) textParam() string {
	if m.photo {
		return "caption"
	}
	return "text"
}

// buildMessage turns a send's parameters into Herald's message, refusing
// with Telegram's description what Telegram would refuse, and what Herald
// cannot carry with a description naming the parameter.
func buildMessage(m method, p params) (jobs.SendMessage, *refusal) {
	var msg jobs.SendMessage
	chat, rf := chatParam(p)
	if rf != nil {
		return msg, rf
	}
	msg.Chat = chat
	if rf := textAndMode(m, p, &msg); rf != nil {
		return msg, rf
	}
	if m.photo {
		photo, rf := photoParam(p)
		if rf != nil {
			return msg, rf
		}
		msg.Photo = photo
	}
	if rf := flags(p, &msg); rf != nil {
		return msg, rf
	}
	kb, rf := keyboard(p.get("reply_markup"))
	if rf != nil {
		return msg, rf
	}
	msg.Buttons = kb
	for _, name := range []string{"entities", "caption_entities"} {
		// Clients send "null" or "[]" for none (the Go library does).
		var list []json.RawMessage
		if raw := p.get(name); raw != "" && (json.Unmarshal([]byte(raw), &list) != nil || len(list) > 0) {
			return msg, badRequest(name + " are not carried by Herald: send the formatting with parse_mode HTML or MarkdownV2")
		}
	}
	return msg, nil
}

// chatParam reads chat_id: a numeric id or an @username.
func chatParam(p params) (string, *refusal) {
	raw := p.get("chat_id")
	if raw == "" {
		return "", badRequest(descNoChat)
	}
	chat, err := jobs.ValidateChat(raw)
	if err != nil {
		return "", badRequest(descNoChatFound)
	}
	return chat, nil
}

// textAndMode reads the text (or caption) and parse_mode, and checks the
// markup as Telegram would parse it. Legacy Markdown is rewritten as HTML.
func textAndMode(m method, p params, msg *jobs.SendMessage) *refusal {
	text := p.vals[m.textParam()]
	if strings.TrimSpace(text) == "" && !m.photo {
		return badRequest(descNoText)
	}
	raw := p.get("parse_mode")
	if strings.EqualFold(raw, "markdown") {
		html, err := legacyMarkdown(text)
		if err != nil {
			return badRequest(err.Error())
		}
		text, raw = html, string(markup.HTML)
	}
	mode, err := markup.ParseMode(raw)
	if err != nil || (raw != "" && mode == markup.None) {
		return badRequest(descParseMode)
	}
	if mode != markup.None && strings.TrimSpace(text) != "" {
		var perr *markup.ParseError
		if err := markup.Validate(text, mode); errors.As(err, &perr) {
			return badRequest(perr.Error())
		} else if err != nil {
			return badRequest("can't parse entities: " + err.Error())
		}
	}
	msg.Text, msg.ParseMode = text, string(mode)
	return nil
}

// photoParam reads sendPhoto's photo: an http(s) URL Telegram fetches, or
// an upload (a file part named photo, or "attach://<part>").
func photoParam(p params) (*jobs.Photo, *refusal) {
	if f, ok := p.files["photo"]; ok {
		return &jobs.Photo{Data: f.Data, Name: f.Name}, nil
	}
	ref := p.get("photo")
	if ref == "" {
		return nil, badRequest(descNoPhoto)
	}
	if part, ok := strings.CutPrefix(ref, "attach://"); ok {
		f, ok := p.files[part]
		if !ok {
			return nil, badRequest(descBadPhoto)
		}
		return &jobs.Photo{Data: f.Data, Name: f.Name}, nil
	}
	// A file_id of an earlier upload belongs to the bot's own files, which
	// Herald does not track: only URLs and uploads are carried.
	if u, err := url.Parse(ref); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, badRequest(descBadPhoto)
	}
	return &jobs.Photo{URL: ref}, nil
}

// flags reads the switches and the forum topic.
func flags(p params, msg *jobs.SendMessage) *refusal {
	msg.DisableNotification = truth(p.get("disable_notification"))
	msg.ProtectContent = truth(p.get("protect_content"))
	msg.DisableLinkPreview = truth(p.get("disable_web_page_preview"))
	if raw := p.get("link_preview_options"); raw != "" {
		var lp struct {
			IsDisabled any `json:"is_disabled"`
		}
		if json.Unmarshal([]byte(raw), &lp) != nil {
			return badRequest(descLinkPreview)
		}
		msg.DisableLinkPreview = truthOf(lp.IsDisabled)
	}
	if raw := p.get("message_thread_id"); raw != "" {
		id, err := strconv.Atoi(raw)
		if err != nil || id < 0 {
			return badRequest(descThread)
		}
		msg.MessageThreadID = id
	}
	return nil
}

// truth reads a Boolean parameter as Telegram does: true or 1.
func truth(s string) bool { return strings.EqualFold(s, "true") || s == "1" }

// truthOf reads a Boolean from JSON, given as a Boolean, a number or a
// string.
func truthOf(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return truth(x)
	}
	return false
}
