package telegramfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

// sendRequest is a validated sendMessage call.
type sendRequest struct {
	at                  time.Time // when the request arrived (Server.arrival)
	chat                chatRef
	text                string
	plain               string // text as the user sees it
	mode                markup.Mode
	threadID            int
	disableNotification bool
	protectContent      bool
	linkPreviewDisabled bool
	reply               *replyRequest         // nil: no reply
	markup              *inlineKeyboardMarkup // nil: no inline keyboard
	photo               *photo                // set by sendPhoto; text is then the caption
	paid                bool                  // allow_paid_broadcast
}

// linkPreviewOptions is the part of LinkPreviewOptions the fake reads and
// echoes back.
type linkPreviewOptions struct {
	IsDisabled bool `json:"is_disabled"`
}

// messageJSON is Telegram's Message object for a sent text message or
// photo, fields in the order Telegram sends them. Channel posts carry
// sender_chat instead of from.
type messageJSON struct {
	MessageID           int                 `json:"message_id"`
	MessageThreadID     int                 `json:"message_thread_id,omitempty"`
	From                *userJSON           `json:"from,omitempty"`
	SenderChat          *chatJSON           `json:"sender_chat,omitempty"`
	Chat                chatJSON            `json:"chat"`
	Date                int64               `json:"date"`
	IsTopicMessage      bool                `json:"is_topic_message,omitempty"`
	ReplyToMessage      *messageJSON        `json:"reply_to_message,omitempty"`
	EditDate            int64               `json:"edit_date,omitempty"`
	HasProtectedContent bool                `json:"has_protected_content,omitempty"`
	Text                string              `json:"text,omitempty"`
	LinkPreviewOptions  *linkPreviewOptions `json:"link_preview_options,omitempty"`
	Photo               []photoSizeJSON     `json:"photo,omitempty"`
	Caption             string              `json:"caption,omitempty"`
	ReplyMarkup         any                 `json:"reply_markup,omitempty"`
}

// sendMessage validates, applies chat behaviours and b's flood control, and
// records the message. A request inside a flood wait announced for the bot
// or for its chat is refused before anything else is looked at, faults
// included.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, b *bot) {
	params, perr := readParams(w, r)
	at := s.arrival(r)
	fault, done := s.admitSend(w, r, b, params, perr, at)
	if done {
		return
	}
	req, e := parseSendRequest(params, s.cfg.CountMarkup)
	if e != nil {
		s.fail(w, b, e)
		return
	}
	req.at = at
	if e := parseFault(fault, req.mode); e != nil {
		s.fail(w, b, e)
		return
	}
	msg, e := s.deliver(b, req)
	s.answerSend(w, r, b, fault, msg, e)
}

// parseFault is the refusal FaultParseEntities makes of a formatted send
// or edit, or nil.
func parseFault(fault fault, mode markup.Mode) *apiError {
	if fault == FaultParseEntities && mode != markup.None {
		return badRequest(`can't parse entities: Unsupported start tag "tg-unknown" at byte offset 0`)
	}
	return nil
}

// answerSend is the end every send method shares: the refusal e, or the
// message, after which FaultAcceptThenHang holds the connection.
func (s *Server) answerSend(w http.ResponseWriter, r *http.Request, b *bot, fault fault, msg messageJSON, e *apiError) {
	if e != nil {
		s.fail(w, b, e)
		return
	}
	if fault == FaultAcceptThenHang {
		s.hang(r, b)
		return
	}
	writeResult(w, msg)
}

// admitSend is the start every send method shares (sendMessage, sendPhoto
// and the edit methods): a request inside a flood wait announced for b or
// for its chat is refused, then the request takes its fault, then a body
// that could not be read (perr) is refused. It reports done
// when it has answered the request; otherwise the caller goes on, with the
// fault for the outcomes that still need the request processed
// (FaultParseEntities and FaultAcceptThenHang).
func (s *Server) admitSend(w http.ResponseWriter, r *http.Request, b *bot, params map[string]string, perr error, at time.Time) (fault, bool) {
	var chat chatRef
	if perr == nil {
		chat, _ = parseChatRef(params["chat_id"])
	}
	s.mu.Lock()
	if e := s.floodWaitLocked(b, s.countedAtLocked(at), chat); e != nil {
		s.mu.Unlock()
		s.fail(w, b, e)
		return 0, true
	}
	fault := s.takeFaultLocked(b)
	s.mu.Unlock()
	switch fault {
	case FaultServerError:
		s.fail(w, b, errInternal)
		return fault, true
	case FaultBadGateway:
		s.count(b, http.StatusBadGateway)
		writeGatewayPage(w)
		return fault, true
	case FaultHang:
		s.hang(r, b)
		return fault, true
	case FaultTooMany:
		s.fail(w, b, tooMany(1))
		return fault, true
	}
	if perr != nil {
		if errors.Is(perr, io.ErrUnexpectedEOF) {
			s.mu.Lock()
			s.tallyLocked(b, func(st *Stats) { st.Incomplete++ })
			s.mu.Unlock()
		}
		s.fail(w, b, badRequest("can't parse request: "+perr.Error()))
		return fault, true
	}
	return fault, false
}

// floodWaitLocked returns the 429 owed by a request of b to chat (the zero
// chatRef when the request names none that can be read) that arrives inside
// a flood wait announced for b or for b's sends to the chat, or nil.
func (s *Server) floodWaitLocked(b *bot, now time.Time, chat chatRef) *apiError {
	v := b.limits.waiting(now, chat.id)
	if v.scope == scopeNone {
		return nil
	}
	return s.refuseLocked(b, v, chat.id, s.rememberChatLocked(chat))
}

// refuseLocked counts a refusal of b's request by flood control, in the
// totals and in b's counters, and returns its 429.
func (s *Server) refuseLocked(b *bot, v verdict, chatID int64, username string) *apiError {
	key := chatKey(chatID, username)
	s.tallyLocked(b, func(st *Stats) {
		if v.inside {
			st.InsideWait++
		}
		switch v.scope {
		case scopeBot:
			st.TooManyBot++
			if v.inside {
				st.InsideWaitBot++
			}
		case scopeChat:
			st.TooManyByChat[key]++
		}
	})
	return tooMany(v.retryAfter)
}

// parseSendRequest checks the parameters of sendMessage in the order the
// Bot API reports problems with them.
func parseSendRequest(p map[string]string, countMarkup bool) (sendRequest, *apiError) {
	var req sendRequest
	chatID := strings.TrimSpace(p["chat_id"])
	if chatID == "" {
		return req, badRequest("chat_id is empty")
	}
	chat, err := parseChatRef(chatID)
	if err != nil {
		return req, badRequest("chat not found")
	}
	req.chat = chat

	req.text = p["text"]
	if strings.TrimSpace(req.text) == "" {
		return req, badRequest("message text is empty")
	}
	mode, err := telegramParseMode(p["parse_mode"])
	if err != nil {
		return req, badRequest("unsupported parse_mode")
	}
	req.mode = mode
	if err := markup.Validate(req.text, mode); err != nil {
		return req, badRequest(err.Error())
	}
	n, err := markup.VisibleLen(req.text, mode)
	if countMarkup && err == nil {
		n = 0
		for _, r := range req.text {
			n += markup.RuneUTF16Len(r)
		}
	}
	switch {
	case err != nil:
		return req, badRequest(err.Error())
	case n == 0:
		return req, badRequest("message text is empty")
	case n > markup.MaxMessageLen:
		return req, badRequest("message is too long")
	}
	if req.plain, err = markup.Plain(req.text, mode); err != nil {
		return req, badRequest(err.Error())
	}

	if v := strings.TrimSpace(p["message_thread_id"]); v != "" {
		id, err := strconv.Atoi(v)
		if err != nil || id < 0 {
			return req, badRequest("message thread not found")
		}
		req.threadID = id
	}
	req.disableNotification = paramBool(p["disable_notification"])
	req.paid = paramBool(p["allow_paid_broadcast"])
	req.protectContent = paramBool(p["protect_content"])
	req.linkPreviewDisabled = paramBool(p["disable_web_page_preview"])
	if v := strings.TrimSpace(p["link_preview_options"]); v != "" {
		var opts linkPreviewOptions
		if err := json.Unmarshal([]byte(v), &opts); err != nil {
			return req, badRequest("can't parse link preview options JSON object")
		}
		req.linkPreviewDisabled = req.linkPreviewDisabled || opts.IsDisabled
	}
	var e *apiError
	if req.markup, e = parseReplyMarkup(p["reply_markup"], false); e != nil {
		return req, e
	}
	if req.reply, e = parseReply(p); e != nil {
		return req, e
	}
	return req, nil
}

// telegramParseMode reads parse_mode as the Bot API does: empty for plain
// text, otherwise HTML or MarkdownV2 in any letter case. The extra spellings
// markup.ParseMode allows for Herald's own configuration ("none", "plain")
// are not part of the Bot API and are refused, and so is legacy Markdown,
// which markup does not implement.
func telegramParseMode(v string) (markup.Mode, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "none", "plain":
		return markup.None, fmt.Errorf("parse_mode %q is not a Bot API value", v)
	}
	return markup.ParseMode(v)
}

// paramBool reads a Boolean parameter; Telegram takes true/false and 1/0.
func paramBool(v string) bool {
	v = strings.TrimSpace(v)
	return strings.EqualFold(v, "true") || v == "1"
}

// deliver applies the chat's behaviour, the reply target and b's flood
// control to req and, when all let it through, records the message (a photo
// when req.photo is set) and returns its Message object. Message ids count
// up per chat over all bots, as the messages of several bots in one chat
// share its numbering on Telegram.
func (s *Server) deliver(b *bot, req sendRequest) (messageJSON, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.countedAtLocked(req.at)
	username := s.rememberChatLocked(req.chat)
	chat := describeChat(req.chat.id, username)
	if e := s.behaviors[chat.ID].refusal(chat); e != nil {
		return messageJSON{}, e
	}
	replyTo, e := s.resolveReplyLocked(chat.ID, req.reply)
	if e != nil {
		return messageJSON{}, e
	}

	v, e := s.admitLocked(b, req, now, chat.ID, username)
	if e != nil {
		return messageJSON{}, e
	}

	s.nextID[chat.ID]++
	rec := Message{
		MessageID:           s.nextID[chat.ID],
		Bot:                 b.name,
		BotID:               b.user.ID,
		ChatID:              chat.ID,
		ChatUsername:        username,
		Text:                req.text,
		ParseMode:           string(req.mode),
		MessageThreadID:     req.threadID,
		DisableNotification: req.disableNotification,
		ProtectContent:      req.protectContent,
		LinkPreviewDisabled: req.linkPreviewDisabled,
		ReplyTo:             replyTo,
		ReplyMarkup:         req.markup,
		Paid:                req.paid,
		Charged:             v.charged,
		At:                  now,
	}
	if req.photo != nil {
		rec.Text, rec.Caption, rec.LinkPreviewDisabled = "", req.text, false
		rec.Photo = b.x.keepPhotoLocked(b, req.photo)
	}
	s.messages = append(s.messages, rec)
	s.indexLocked()
	s.tallyLocked(b, func(st *Stats) {
		st.Accepted++
		if req.paid {
			st.PaidSends++
		}
		if v.charged {
			st.ChargedSends++
			st.StarsSpent = chargedStars(st.ChargedSends)
		}
	})
	s.notifyLocked()
	return s.renderAsLocked(&s.messages[len(s.messages)-1], true, req.plain), nil
}

// admitLocked applies b's flood control to req, a send to chatID, and
// for a paid one (allow_paid_broadcast) b's paid broadcasts: refused when
// they are not enabled, charged beyond the free limit, refused when the
// balance cannot pay for the charge. The refusals of a paid send say so in
// their description and are counted in Stats.PaidRefused.
func (s *Server) admitLocked(b *bot, req sendRequest, now time.Time, chatID int64, username string) (verdict, *apiError) {
	var w *wallet
	if req.paid {
		if !b.wallet.enabled {
			s.tallyLocked(b, func(st *Stats) { st.PaidRefused++ })
			return verdict{}, badRequest(strings.TrimPrefix(ErrPaidNotEnabled, "Bad Request: "))
		}
		w = &b.wallet
	}
	v := b.limits.admit(now, chatID, w)
	switch {
	case v.scope != scopeNone:
		return v, s.refuseLocked(b, v, chatID, username)
	case v.unpaid:
		s.tallyLocked(b, func(st *Stats) { st.PaidRefused++ })
		return v, badRequest(strings.TrimPrefix(ErrBalanceTooLow, "Bad Request: "))
	}
	return v, nil
}
