package telegramfake

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

// editKind names the edit methods.
type editKind int

const (
	editText editKind = iota
	editCaption
	editMarkup
)

var editMethods = [...]string{editText: "editMessageText", editCaption: "editMessageCaption", editMarkup: "editMessageReplyMarkup"}

// editRequest is a validated edit.
type editRequest struct {
	at        time.Time // when the request arrived (Server.arrival)
	kind      editKind
	chat      chatRef
	messageID int
	text      string // the new text or caption, markup included
	mode      markup.Mode
	markup    *inlineKeyboardMarkup // the new keyboard; nil removes it
}

func (s *Server) editMessageText(w http.ResponseWriter, r *http.Request, b *bot) {
	s.edit(w, r, b, editText)
}

func (s *Server) editMessageCaption(w http.ResponseWriter, r *http.Request, b *bot) {
	s.edit(w, r, b, editCaption)
}

func (s *Server) editMessageReplyMarkup(w http.ResponseWriter, r *http.Request, b *bot) {
	s.edit(w, r, b, editMarkup)
}

// edit changes a message the bot sent, as the edit methods do. An edit is
// held to the same flood control as a send (Telegram counts edits towards
// a chat's limits) and takes the same faults; it does not make a message.
// The reply_markup of an edit replaces the keyboard: an edit without one
// removes it, as on Telegram.
func (s *Server) edit(w http.ResponseWriter, r *http.Request, b *bot, kind editKind) {
	params, perr := readParams(w, r)
	at := s.arrival(r)
	fault, done := s.admitSend(w, r, b, params, perr, at)
	if done {
		return
	}
	req, e := parseEditRequest(params, kind, s.cfg.CountMarkup)
	if e != nil {
		s.fail(w, b, e)
		return
	}
	req.at = at
	if e := parseFault(fault, req.mode); e != nil {
		s.fail(w, b, e)
		return
	}
	msg, e := s.applyEdit(b, req)
	s.answerSend(w, r, b, fault, msg, e)
}

// parseEditRequest checks an edit's parameters in the order the Bot API
// does: the new text or caption, the keyboard, then the message.
func parseEditRequest(p map[string]string, kind editKind, countMarkup bool) (editRequest, *apiError) {
	req := editRequest{kind: kind}
	if kind != editMarkup {
		mode, err := telegramParseMode(p["parse_mode"])
		if err != nil {
			return req, badRequest("unsupported parse_mode")
		}
		req.mode = mode
		field, limit, tooLong := "text", markup.MaxMessageLen, "message is too long"
		if kind == editCaption {
			field, limit, tooLong = "caption", maxCaptionLen, "message caption is too long"
		}
		req.text = p[field]
		if kind == editText && strings.TrimSpace(req.text) == "" {
			return req, badRequest("message text is empty")
		}
		if err := markup.Validate(req.text, mode); err != nil {
			return req, badRequest(err.Error())
		}
		n, err := markup.VisibleLen(req.text, mode)
		if err != nil {
			return req, badRequest(err.Error())
		}
		if countMarkup {
			n = markup.UTF16Len(req.text)
		}
		switch {
		case kind == editText && n == 0:
			return req, badRequest("message text is empty")
		case n > limit:
			return req, badRequest(tooLong)
		case n == 0:
			req.text, req.mode = "", markup.None
		}
	}
	var e *apiError
	if req.markup, e = parseReplyMarkup(p["reply_markup"], true); e != nil {
		return req, e
	}

	chatID := strings.TrimSpace(p["chat_id"])
	msgID, _ := strconv.Atoi(strings.TrimSpace(p["message_id"]))
	if chatID == "" && msgID == 0 {
		if strings.TrimSpace(p["inline_message_id"]) == "" {
			return req, badRequest("message identifier is not specified")
		}
		// The fake sends no inline messages, so it knows no inline ids.
		return req, badRequest("MESSAGE_ID_INVALID")
	}
	if chatID == "" {
		return req, badRequest("chat_id is empty")
	}
	chat, err := parseChatRef(chatID)
	if err != nil {
		return req, badRequest("chat not found")
	}
	req.chat, req.messageID = chat, max(msgID, 0)
	return req, nil
}

// applyEdit finds the message, checks that b may edit it this way and that
// the edit changes it, applies b's flood control, and records the edit. It
// returns the edited Message object.
func (s *Server) applyEdit(b *bot, req editRequest) (messageJSON, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.countedAtLocked(req.at)
	username := s.rememberChatLocked(req.chat)
	chat := describeChat(req.chat.id, username)
	if e := s.behaviors[chat.ID].refusal(chat); e != nil {
		return messageJSON{}, e
	}
	rec := s.lookupLocked(chat.ID, req.messageID)
	switch {
	case rec == nil || rec.Deleted:
		return messageJSON{}, badRequest("message to edit not found")
	case rec.Bot != b.name:
		return messageJSON{}, badRequest("message can't be edited")
	case req.kind == editText && rec.Photo != nil:
		return messageJSON{}, badRequest("there is no text in the message to edit")
	case req.kind == editCaption && rec.Photo == nil:
		return messageJSON{}, badRequest("there is no caption in the message to edit")
	}

	cur := rec.Current()
	next := Edit{Method: editMethods[req.kind], Text: cur.Text, Caption: cur.Caption, ParseMode: cur.ParseMode,
		ReplyMarkup: req.markup, At: now}
	switch req.kind {
	case editText:
		next.Text, next.ParseMode = req.text, string(req.mode)
	case editCaption:
		next.Caption, next.ParseMode = req.text, string(req.mode)
	}
	curText, nextText := cur.Text, next.Text
	if rec.Photo != nil {
		curText, nextText = cur.Caption, next.Caption
	}
	if contentKey(curText, markup.Mode(cur.ParseMode)) == contentKey(nextText, markup.Mode(next.ParseMode)) &&
		sameMarkup(cur.ReplyMarkup, next.ReplyMarkup) {
		return messageJSON{}, badRequest("message is not modified: specified new message content and reply markup " +
			"are exactly the same as a current content and reply markup of the message")
	}

	if v := b.limits.admit(now, chat.ID, nil); v.scope != scopeNone {
		return messageJSON{}, s.refuseLocked(b, v, chat.ID, username)
	}
	key := msgKey{chat.ID, rec.MessageID}
	s.x.edits[key] = append(s.x.edits[key], next)
	rec.Edited, rec.LastEdit = rec.Edited+1, &next
	s.tallyLocked(b, func(st *Stats) { st.Edited++ })
	s.notifyLocked()
	return s.renderLocked(rec, true), nil
}

// moreMethods returns the handler of the methods beyond getMe, getChat
// and sendMessage (method in lower case, as ServeHTTP matches it), or nil.
func (s *Server) moreMethods(method string) func(http.ResponseWriter, *http.Request, *bot) {
	switch strings.ToLower(method) {
	case "sendphoto":
		return s.sendPhoto
	case "editmessagetext":
		return s.editMessageText
	case "editmessagecaption":
		return s.editMessageCaption
	case "editmessagereplymarkup":
		return s.editMessageReplyMarkup
	case "answercallbackquery":
		return s.answerCallbackQuery
	case "getupdates":
		return s.getUpdates
	case "setwebhook":
		return s.setWebhook
	case "deletewebhook":
		return s.deleteWebhook
	case "getwebhookinfo":
		return s.getWebhookInfo
	}
	return nil
}
