package telegramfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

// The message store: every accepted message stays addressable by its chat
// and message id, as on Telegram, so that later requests can reply to it,
// edit it or press its buttons, and tests can read what it shows now.

// replyRef names the message another one replies to.
type replyRef struct {
	ChatID    int64 `json:"chat_id"`
	MessageID int   `json:"message_id"`
}

// inlineKeyboardMarkup is the inline keyboard of a message: the
// reply_markup of sendMessage, sendPhoto and the edit methods when it holds
// an "inline_keyboard". Other kinds of reply_markup (a reply keyboard, its
// removal, a forced reply) are checked and accepted but not stored: they do
// not belong to the message.
type inlineKeyboardMarkup struct {
	InlineKeyboard [][]inlineKeyboardButton `json:"inline_keyboard"`
}

// inlineKeyboardButton is one button of an inline keyboard.
type inlineKeyboardButton struct {
	Text string `json:"text"`
	// URL is the link a URL button opens.
	URL string `json:"url,omitempty"`
	// CallbackData is what a press of a callback button sends to the bot
	// (1 to 64 bytes).
	CallbackData string `json:"callback_data,omitempty"`
	// Other names the field of any other kind of button, such as "web_app"
	// or "switch_inline_query"; its value is kept as sent.
	Other string `json:"other,omitempty"`

	otherValue json.RawMessage
}

// Edit is one state of a message's content: the result of an accepted
// editMessageText, editMessageCaption or editMessageReplyMarkup, or (from
// Message.Current with no edits) the content as sent.
type Edit struct {
	// Method is the Bot API method that made the edit, such as
	// "editMessageText"; empty for the content as sent.
	Method string `json:"method,omitempty"`
	// Text is the text of a text message, markup included; empty for a
	// photo.
	Text string `json:"text,omitempty"`
	// Caption is the caption of a photo, markup included.
	Caption string `json:"caption,omitempty"`
	// ParseMode is the canonical parse mode of Text or Caption.
	ParseMode string `json:"parse_mode,omitempty"`
	// ReplyMarkup is the inline keyboard after the edit; nil when the edit
	// removed it or there was none.
	ReplyMarkup *inlineKeyboardMarkup `json:"reply_markup,omitempty"`
	// At is when the edit was accepted (Config.Now).
	At time.Time `json:"at"`
}

// Current returns what the message shows now: its last edit, or its
// content as sent when it was never edited.
func (m Message) Current() Edit {
	if m.LastEdit != nil {
		return *m.LastEdit
	}
	return Edit{Text: m.Text, Caption: m.Caption, ParseMode: m.ParseMode, ReplyMarkup: m.ReplyMarkup, At: m.At}
}

// IsPhoto reports whether the message was sent with sendPhoto.
func (m Message) IsPhoto() bool { return m.Photo != nil }

// msgKey addresses a message: message ids count per chat.
type msgKey struct {
	chat int64
	id   int
}

// extras is the server-wide state of the methods beyond sendMessage. It is
// guarded by Server.mu, except ctx, cancel and workers, which are set by New.
type extras struct {
	index     map[int64][]int32 // chat → the index in Server.messages of its message id i+1
	edits     map[msgKey][]Edit // message → its edits, oldest first
	photoURLs map[string]PhotoURL

	ctx       context.Context // ends at Close: webhook requests and their waits
	cancel    context.CancelFunc
	workers   sync.WaitGroup // webhook delivery loops
	client    *http.Client   // Config.WebhookClient or the fake's own
	ownClient bool
}

func (s *Server) initExtras() {
	s.x.ctx, s.x.cancel = context.WithCancel(context.Background())
	s.x.client = s.cfg.WebhookClient
	if s.x.client == nil {
		s.x.client = &http.Client{
			Timeout:   toReal(defaultWebhookTimeout, s.cfg.TimeScale),
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
		}
		s.x.ownClient = true
	}
}

// resetExtrasLocked forgets the message index, the photo URLs and every
// bot's updates, callback queries, files and webhook, as Reset does. A
// long poll in progress stays and sees the empty queue.
func (s *Server) resetExtrasLocked() {
	s.x.index = make(map[int64][]int32)
	s.x.edits = make(map[msgKey][]Edit)
	s.x.photoURLs = make(map[string]PhotoURL)
	for _, b := range s.bots {
		b.resetState()
	}
}

// closeExtras ends the webhook deliveries; Close calls it after closing.
func (s *Server) closeExtras() {
	s.x.cancel()
	s.x.workers.Wait()
	if s.x.ownClient {
		s.x.client.CloseIdleConnections()
	}
}

// lookupLocked returns the record of a message, deleted or not, or nil.
func (s *Server) lookupLocked(chatID int64, messageID int) *Message {
	ids := s.x.index[chatID]
	if messageID < 1 || messageID > len(ids) || ids[messageID-1] < 0 {
		return nil // none, or a person's message (Say)
	}
	return &s.messages[ids[messageID-1]]
}

// indexLocked makes the last recorded message addressable. Message ids
// count up from 1 in each chat, so a chat's index is a slice.
func (s *Server) indexLocked() {
	i := len(s.messages) - 1
	m := &s.messages[i]
	s.x.index[m.ChatID] = append(s.x.index[m.ChatID], int32(i))
}

// botNamed returns the bot called name, or nil.
func (s *Server) botNamed(name string) *bot {
	for _, b := range s.bots {
		if b.name == name {
			return b
		}
	}
	return nil
}

// Lookup returns the record of the message with messageID in the chat
// with chatID (Message.ChatID), deleted or not, with its latest edit, or
// false when no bot sent such a message.
func (s *Server) Lookup(chatID int64, messageID int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.lookupLocked(chatID, messageID)
	if m == nil {
		return Message{}, false
	}
	return *m, true
}

// Edits returns the accepted edits of the message with messageID in the
// chat with chatID, oldest first; nil when it was never edited or does not
// exist.
func (s *Server) Edits(chatID int64, messageID int) []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.x.edits[msgKey{chatID, messageID}])
}

// errNoMessage is returned by the methods that act on a message the fake
// does not hold.
var errNoMessage = errors.New("telegramfake: no such message")

// DeleteMessage deletes a message as a chat member or administrator would
// in a Telegram client: later requests that reply to it get "message to be
// replied not found" (unless allow_sending_without_reply), edits get
// "message to edit not found", and it cannot be pressed. Its record stays,
// with Message.Deleted set. It returns errNoMessage for a message the fake
// does not hold.
func (s *Server) DeleteMessage(chatID int64, messageID int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.lookupLocked(chatID, messageID)
	if m == nil {
		return fmt.Errorf("%w: message %d in chat %d", errNoMessage, messageID, chatID)
	}
	m.Deleted = true
	s.notifyLocked()
	return nil
}

// WaitUntil blocks until cond reports true. cond is called at once and
// again after every change the fake records (a message, an edit, a
// deletion, a callback query or its answer, an update delivered or
// confirmed, a webhook attempt); it may call the Server's methods. It
// returns the context's error if ctx ends first and errClosed once the
// server is closed.
func (s *Server) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		closed, changed := s.closed, s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return errClosed
		}
		select {
		case <-changed:
		case <-s.closing:
		case <-ctx.Done():
			return fmt.Errorf("telegramfake: waiting for a condition: %w", context.Cause(ctx))
		}
	}
}

// replyRequest is the reply part of a send request.
type replyRequest struct {
	chat         chatRef // the chat of the message replied to; zero: the same chat
	messageID    int
	allowWithout bool
}

// replyParametersJSON is the ReplyParameters object the fake reads.
type replyParametersJSON struct {
	MessageID                *json.RawMessage `json:"message_id"`
	ChatID                   json.RawMessage  `json:"chat_id"`
	AllowSendingWithoutReply bool             `json:"allow_sending_without_reply"`
}

// parseReply reads reply_parameters, or without it the older
// reply_to_message_id and allow_sending_without_reply, as the Bot API does:
// reply_parameters wins when present, and a message id that is not
// positive means no reply at all. It returns nil for no reply.
func parseReply(p map[string]string) (*replyRequest, *apiError) {
	raw, has := p["reply_parameters"]
	if !has {
		id, _ := strconv.Atoi(strings.TrimSpace(p["reply_to_message_id"]))
		if id <= 0 {
			return nil, nil
		}
		return &replyRequest{messageID: id, allowWithout: paramBool(p["allow_sending_without_reply"])}, nil
	}
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		var v any
		if json.Unmarshal([]byte(raw), &v) == nil {
			return nil, badRequest("object expected as reply parameters")
		}
		return nil, badRequest("can't parse reply parameters JSON object")
	}
	if len(obj) == 0 {
		return nil, nil
	}
	var rp replyParametersJSON
	if err := json.Unmarshal([]byte(raw), &rp); err != nil {
		return nil, badRequest("can't parse reply parameters JSON object")
	}
	if rp.MessageID == nil {
		return nil, badRequest(`can't find field "message_id"`)
	}
	var id int
	if err := json.Unmarshal(*rp.MessageID, &id); err != nil {
		return nil, badRequest(`field "message_id" must be a valid Number`)
	}
	if id <= 0 {
		return nil, nil
	}
	rr := &replyRequest{messageID: id, allowWithout: rp.AllowSendingWithoutReply}
	if chat, ok := jsonParam(rp.ChatID); ok {
		ref, err := parseChatRef(chat)
		if err != nil {
			return nil, badRequest("chat not found")
		}
		rr.chat = ref
	}
	return rr, nil
}

// resolveReplyLocked finds the message a send to chatID replies to. A
// missing or deleted message is an error unless allow_sending_without_reply
// was passed for a reply in the same chat; then the message goes out as no
// reply and the result is nil.
func (s *Server) resolveReplyLocked(chatID int64, rr *replyRequest) (*replyRef, *apiError) {
	if rr == nil {
		return nil, nil
	}
	target := chatID
	if rr.chat.id != 0 {
		s.rememberChatLocked(rr.chat)
		target = rr.chat.id
	}
	if m := s.lookupLocked(target, rr.messageID); m != nil && !m.Deleted {
		return &replyRef{ChatID: target, MessageID: rr.messageID}, nil
	}
	if rr.allowWithout && target == chatID {
		return nil, nil
	}
	return nil, badRequest("message to be replied not found")
}

// maxCallbackData is the longest callback_data Telegram accepts, in bytes.
const maxCallbackData = 64

// inlineButtonKinds are the fields that make an inline keyboard button
// something other than a text button, in the order the Bot API tries them.
var inlineButtonKinds = []string{
	"url", "callback_data", "callback_game", "pay", "switch_inline_query",
	"switch_inline_query_chosen_chat", "switch_inline_query_current_chat", "login_url", "web_app", "copy_text",
}

// parseReplyMarkup reads reply_markup as the Bot API does. It returns the
// inline keyboard, or nil when the parameter is absent, the keyboard has no
// rows, or the markup is of another kind; with inlineOnly (the edit
// methods) another kind is an error.
func parseReplyMarkup(v string, inlineOnly bool) (*inlineKeyboardMarkup, *apiError) {
	if v == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		var anyValue any
		if json.Unmarshal([]byte(v), &anyValue) == nil {
			return nil, badRequest("object expected as reply markup")
		}
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	// The Bot API reads every kind and keeps the first present of: a reply
	// keyboard, an inline keyboard, a keyboard removal, a forced reply.
	replyRows := 0
	if raw, ok := obj["keyboard"]; ok && string(raw) != "null" {
		var rows [][]json.RawMessage
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, badRequest(`field "keyboard" must be an Array of Arrays`)
		}
		replyRows = len(rows)
	}
	var inline [][]inlineKeyboardButton
	if raw, ok := obj["inline_keyboard"]; ok && string(raw) != "null" {
		var rows []json.RawMessage
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, badRequest(`field "inline_keyboard" must be of type Array`)
		}
		for _, rawRow := range rows {
			var row []json.RawMessage
			if err := json.Unmarshal(rawRow, &row); err != nil {
				return nil, badRequest(`field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays`)
			}
			var buttons []inlineKeyboardButton
			for _, rawButton := range row {
				b, e := parseInlineButton(rawButton)
				if e != nil {
					return nil, e
				}
				buttons = append(buttons, b)
			}
			inline = append(inline, buttons)
		}
	}
	flag := func(name string) bool { return string(obj[name]) == "true" }
	var kb *inlineKeyboardMarkup
	switch {
	case replyRows > 0:
	case len(inline) > 0:
		kb = &inlineKeyboardMarkup{InlineKeyboard: inline}
	case flag("remove_keyboard") || flag("hide_keyboard") || flag("force_reply") || flag("force_reply_keyboard"):
	default:
		return nil, nil // no markup at all
	}
	if kb == nil && inlineOnly {
		return nil, badRequest("inline keyboard expected")
	}
	if kb != nil {
		for _, row := range kb.InlineKeyboard {
			for _, b := range row {
				if b.CallbackData != "" && len(b.CallbackData) > maxCallbackData {
					return nil, badRequest("BUTTON_DATA_INVALID")
				}
				if b.URL != "" && !validButtonURL(b.URL) {
					return nil, badRequest("BUTTON_URL_INVALID")
				}
			}
		}
	}
	return kb, nil
}

// parseInlineButton reads one inlineKeyboardButton.
func parseInlineButton(raw json.RawMessage) (inlineKeyboardButton, *apiError) {
	const prefix = "can't parse inline keyboard button: "
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return inlineKeyboardButton{}, badRequest(prefix + "InlineKeyboardButton must be an Object")
	}
	var b inlineKeyboardButton
	rawText, ok := obj["text"]
	if !ok {
		return b, badRequest(prefix + `Can't find field "text"`)
	}
	if err := json.Unmarshal(rawText, &b.Text); err != nil {
		return b, badRequest(prefix + `Field "text" must be of type String`)
	}
	for _, kind := range inlineButtonKinds {
		v, ok := obj[kind]
		if !ok {
			continue
		}
		switch kind {
		case "url", "callback_data":
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				return b, badRequest(prefix + fmt.Sprintf("Field %q must be of type String", kind))
			}
			if str == "" {
				continue // an empty url or callback_data does not make a button of that kind
			}
			if kind == "url" {
				b.URL = str
			} else {
				b.CallbackData = str
			}
		default:
			b.Other, b.otherValue = kind, slices.Clone(v)
		}
		return b, nil
	}
	return b, badRequest(prefix + "Text buttons are unallowed in the inline keyboard")
}

// validButtonURL accepts the links Telegram opens from a URL button.
func validButtonURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "tg":
		return true
	}
	return false
}

// markupJSON renders an inline keyboard as Telegram returns it in a Message.
func markupJSON(kb *inlineKeyboardMarkup) any {
	if kb == nil {
		return nil
	}
	rows := make([][]map[string]any, 0, len(kb.InlineKeyboard))
	for _, row := range kb.InlineKeyboard {
		out := make([]map[string]any, 0, len(row))
		for _, b := range row {
			m := map[string]any{"text": b.Text}
			switch {
			case b.URL != "":
				m["url"] = b.URL
			case b.CallbackData != "":
				m["callback_data"] = b.CallbackData
			case b.Other != "":
				m[b.Other] = b.otherValue
			}
			out = append(out, m)
		}
		rows = append(rows, out)
	}
	return map[string]any{"inline_keyboard": rows}
}

// sameMarkup reports whether two inline keyboards are the same to Telegram.
func sameMarkup(a, b *inlineKeyboardMarkup) bool {
	ja, _ := json.Marshal(markupJSON(a))
	jb, _ := json.Marshal(markupJSON(b))
	return string(ja) == string(jb)
}

// contentKey is what Telegram compares to decide that an edit changes
// nothing: the text a user sees and its formatting. Formatted text without
// any markup is the same content as plain text; two different spellings of
// the same formatting (<b> and <strong>) count as different here, a
// simplification of Telegram's comparison of entities.
func contentKey(text string, mode markup.Mode) string {
	plain, err := markup.Plain(text, mode)
	if err != nil {
		return string(mode) + "\x00" + text
	}
	if mode == markup.None || plain == text {
		return "\x00" + plain
	}
	return string(mode) + "\x00" + text
}

// plainOf is the text a user sees of text in mode (text itself when it does
// not parse, which validated records always do).
func plainOf(text, mode string) string {
	p, err := markup.Plain(text, markup.Mode(mode))
	if err != nil {
		return text
	}
	return p
}

// renderLocked builds the Message object Telegram returns for a record as
// it is now: its current text or caption, inline keyboard and edit_date,
// and, when withReply is set, the message it replies to (itself rendered
// without its own reply, as Telegram does), unless that one was deleted.
func (s *Server) renderLocked(rec *Message, withReply bool) messageJSON {
	cur := rec.Current()
	shown := cur.Text
	if rec.Photo != nil {
		shown = cur.Caption
	}
	return s.renderAsLocked(rec, withReply, plainOf(shown, cur.ParseMode))
}

// renderAsLocked is renderLocked given the plain text or caption the
// message shows now.
func (s *Server) renderAsLocked(rec *Message, withReply bool, plain string) messageJSON {
	chat := describeChat(rec.ChatID, rec.ChatUsername)
	cur := rec.Current()
	out := messageJSON{
		MessageID:           rec.MessageID,
		MessageThreadID:     rec.MessageThreadID,
		Chat:                chat,
		Date:                rec.At.Unix(),
		IsTopicMessage:      rec.MessageThreadID != 0,
		HasProtectedContent: rec.ProtectContent,
		ReplyMarkup:         markupJSON(cur.ReplyMarkup),
	}
	if rec.LastEdit != nil {
		out.EditDate = cur.At.Unix()
	}
	if chat.Type == chatChannel {
		out.SenderChat = &chat
	} else if b := s.botNamed(rec.Bot); b != nil {
		from := b.user
		out.From = &from
	}
	if rec.Photo != nil {
		out.Photo = rec.Photo.sizes()
		out.Caption = plain
	} else {
		out.Text = plain
		if rec.LinkPreviewDisabled {
			out.LinkPreviewOptions = &linkPreviewOptions{IsDisabled: true}
		}
	}
	if withReply && rec.ReplyTo != nil {
		if t := s.lookupLocked(rec.ReplyTo.ChatID, rec.ReplyTo.MessageID); t != nil && !t.Deleted {
			r := s.renderLocked(t, false)
			out.ReplyToMessage = &r
		}
	}
	return out
}
