package telegramfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

// User is a Telegram user, as the from field of a callback query shows
// them.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// CallbackQuery is the record of one button press made by Press, and of
// how the bot received and answered it.
type CallbackQuery struct {
	// ID is the callback query id the bot answers with answerCallbackQuery.
	ID string `json:"id"`
	// UpdateID is the update_id of the update that carries it.
	UpdateID int `json:"update_id"`
	// Bot is the name of the bot that sent the message and gets the query.
	Bot       string `json:"bot"`
	ChatID    int64  `json:"chat_id"`
	MessageID int    `json:"message_id"`
	// ChatInstance is the query's chat_instance: the same for every press
	// in one chat.
	ChatInstance string `json:"chat_instance"`
	From         User   `json:"from"`
	Data         string `json:"data"`
	// At is when the button was pressed (Config.Now).
	At time.Time `json:"at"`
	// Deliveries counts the times the update reached the bot: getUpdates
	// answers carrying it and webhook posts answered 2xx, Redeliver copies
	// included.
	Deliveries int `json:"deliveries"`
	// Answer is the accepted answerCallbackQuery, or nil.
	Answer *CallbackAnswer `json:"answer,omitempty"`
	// RefusedAnswers counts answerCallbackQuery calls for this query that
	// were refused as too old or already answered.
	RefusedAnswers int `json:"refused_answers,omitempty"`
}

// CallbackAnswer is an accepted answerCallbackQuery.
type CallbackAnswer struct {
	Text      string    `json:"text,omitempty"`
	ShowAlert bool      `json:"show_alert,omitempty"`
	URL       string    `json:"url,omitempty"`
	CacheTime int       `json:"cache_time,omitempty"`
	At        time.Time `json:"at"`
}

// callbackQueryJSON and updateJSON are Telegram's CallbackQuery and Update
// objects.
type callbackQueryJSON struct {
	ID           string       `json:"id"`
	From         User         `json:"from"`
	Message      *messageJSON `json:"message,omitempty"`
	ChatInstance string       `json:"chat_instance"`
	Data         string       `json:"data,omitempty"`
}

type updateJSON struct {
	UpdateID      int                    `json:"update_id"`
	CallbackQuery *callbackQueryJSON     `json:"callback_query,omitempty"`
	MyChatMember  *chatMemberUpdatedJSON `json:"my_chat_member,omitempty"`
}

// maxCallbackAnswerLen is the longest answer text, in characters.
const maxCallbackAnswerLen = 200

// oneBot resolves the bot argument of Press, Redeliver and the inspection
// methods: a bot's name or id, or "" when the fake serves a single bot.
func (s *Server) oneBot(sel string) (*bot, error) {
	if sel == "" {
		if len(s.bots) == 1 {
			return s.bots[0], nil
		}
		return nil, s.unknownBot(sel)
	}
	bots, err := s.selectBots([]string{sel})
	if err != nil {
		return nil, err
	}
	return bots[0], nil
}

// Press presses the inline keyboard button with callback_data data on the
// message messageID in the chat chatID, as the user from does in a Telegram
// client, and returns the callback query it makes. The bot (its name or
// id; "" when the fake serves one bot) gets a callback_query update: its
// next getUpdates answers it, or it is posted to its webhook. The update
// carries the message as it is now, edits included.
//
// Press fails, making nothing, when the message does not exist, was
// deleted (errNoMessage) or was sent by another bot, when its current
// keyboard has no callback button with that data (a client cannot send
// other data), when from has no positive id, and when the bot's
// allowed_updates leave out callback_query (Telegram drops such updates).
func (s *Server) Press(bot string, chatID int64, messageID int, from User, data string) (CallbackQuery, error) {
	b, err := s.oneBot(bot)
	if err != nil {
		return CallbackQuery{}, err
	}
	if from.ID <= 0 {
		return CallbackQuery{}, fmt.Errorf("telegramfake: Press: a user needs a positive id, got %d", from.ID)
	}
	if from.FirstName == "" {
		from.FirstName = "User " + strconv.FormatInt(from.ID, 10)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.lookupLocked(chatID, messageID)
	switch {
	case rec == nil || rec.Deleted:
		return CallbackQuery{}, fmt.Errorf("%w: message %d in chat %d (deleted or never sent)", errNoMessage, messageID, chatID)
	case rec.Bot != b.name:
		return CallbackQuery{}, fmt.Errorf("telegramfake: Press: message %d in chat %d was sent by bot %q, not %q", messageID, chatID, rec.Bot, b.name)
	case !hasCallbackButton(rec.Current().ReplyMarkup, data):
		return CallbackQuery{}, fmt.Errorf("telegramfake: Press: message %d in chat %d has no button with callback_data %q", messageID, chatID, data)
	case !b.x.allows("callback_query"):
		return CallbackQuery{}, fmt.Errorf("telegramfake: Press: bot %q does not receive callback_query updates (allowed_updates %q)", b.name, b.x.allowed)
	}

	now := s.cfg.Now()
	st := &b.x
	st.querySeq++
	q := &CallbackQuery{
		ID:           strconv.FormatInt(b.user.ID*1_000_000+st.querySeq, 10),
		UpdateID:     st.nextUpdateID,
		Bot:          b.name,
		ChatID:       chatID,
		MessageID:    messageID,
		ChatInstance: chatInstance(b.user.ID, chatID),
		From:         from,
		Data:         data,
		At:           now,
	}
	st.nextUpdateID++
	msg := s.renderLocked(rec, true)
	body, err := marshalVerbatim(updateJSON{UpdateID: q.UpdateID, CallbackQuery: &callbackQueryJSON{
		ID: q.ID, From: from, Message: &msg, ChatInstance: q.ChatInstance, Data: data,
	}})
	if err != nil {
		return CallbackQuery{}, fmt.Errorf("telegramfake: Press: %w", err)
	}
	st.queries[q.ID] = q
	st.queryLog = append(st.queryLog, q)
	st.pushLocked(&update{id: q.UpdateID, body: body, query: q,
		expires: now.Add(toReal(callbackQueryLifetime, s.cfg.TimeScale))})
	s.notifyLocked()
	return *q, nil
}

// hasCallbackButton reports whether kb has a callback button sending data.
func hasCallbackButton(kb *inlineKeyboardMarkup, data string) bool {
	if kb == nil || data == "" {
		return false
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData == data {
				return true
			}
		}
	}
	return false
}

// chatInstance is a stable chat_instance for a bot and a chat, written as
// the signed 64-bit number Telegram sends.
func chatInstance(botID, chatID int64) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", botID, chatID)
	return strconv.FormatInt(int64(h.Sum64()), 10)
}

// marshalVerbatim encodes v as Telegram does, without HTML escaping.
func marshalVerbatim(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errNoUpdate is returned by Redeliver for an update the bot never got.
var errNoUpdate = errors.New("telegramfake: no such update")

// Redeliver makes Telegram hand the update with updateID (see
// CallbackQuery.UpdateID) to the bot times more, with the same update_id,
// body and callback query id, as happens when Telegram does not learn that
// a delivery succeeded. With a webhook each copy is posted (and retried
// like any update until answered 2xx); without, each copy is returned once
// by a later getUpdates, whatever its offset. The copies expire with the
// update: Redeliver of an expired update fails.
func (s *Server) Redeliver(bot string, updateID int, times int) error {
	b, err := s.oneBot(bot)
	if err != nil {
		return err
	}
	if times < 1 {
		return fmt.Errorf("telegramfake: Redeliver: times %d, want at least 1", times)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := b.x.updates[updateID]
	if u == nil {
		return fmt.Errorf("%w: bot %q has no update %d", errNoUpdate, b.name, updateID)
	}
	if !s.cfg.Now().Before(u.expires) {
		return fmt.Errorf("%w: update %d of bot %q has expired", errNoUpdate, updateID, b.name)
	}
	for range times {
		b.x.again = append(b.x.again, &delivery{u: u})
	}
	b.x.signal()
	s.notifyLocked()
	return nil
}

var errQueryTooOld = badRequest("query is too old and response timeout expired or query ID is invalid")

// answerCallbackQuery records the answer to a callback query made by
// Press. A query can be answered once, within Config.CallbackAnswerTimeout
// of the press; an unknown, answered or too old query is refused. The text
// holds at most 200 characters. Answers are not subject to flood control.
func (s *Server) answerCallbackQuery(w http.ResponseWriter, r *http.Request, b *bot) {
	params, err := readParams(w, r)
	if err != nil {
		s.fail(w, b, badRequest("can't parse request: "+err.Error()))
		return
	}
	ans := CallbackAnswer{
		Text:      params["text"],
		ShowAlert: paramBool(params["show_alert"]),
		URL:       params["url"],
		CacheTime: intParam(params["cache_time"], 0, 0, 30*24*3600),
	}
	s.mu.Lock()
	now := s.cfg.Now()
	q := b.x.queries[params["callback_query_id"]]
	timeout := s.cfg.CallbackAnswerTimeout
	if q == nil || q.Answer != nil || timeout > 0 && !now.Before(q.At.Add(toReal(timeout, s.cfg.TimeScale))) {
		if q != nil {
			q.RefusedAnswers++
			s.notifyLocked()
		}
		s.mu.Unlock()
		s.fail(w, b, errQueryTooOld)
		return
	}
	if markup.UTF16Len(ans.Text) > maxCallbackAnswerLen {
		s.mu.Unlock()
		s.fail(w, b, badRequest("MESSAGE_TOO_LONG"))
		return
	}
	ans.At = now
	q.Answer = &ans
	s.tallyLocked(b, func(st *Stats) { st.Answered++ })
	s.notifyLocked()
	s.mu.Unlock()
	writeResult(w, true)
}

// CallbackQueries returns copies of the callback queries made by Press for
// the bot (its name or id; "" when the fake serves one bot), oldest first,
// with their deliveries and answers; nil for a bot the fake does not serve.
func (s *Server) CallbackQueries(bot string) []CallbackQuery {
	b, err := s.oneBot(bot)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CallbackQuery, 0, len(b.x.queryLog))
	for _, q := range b.x.queryLog {
		c := *q
		if q.Answer != nil {
			a := *q.Answer
			c.Answer = &a
		}
		out = append(out, c)
	}
	return out
}

// updateState describes how a bot receives its updates.
type updateState struct {
	// Webhook is the webhook URL; empty when the bot uses getUpdates.
	Webhook string `json:"webhook,omitempty"`
	// SecretToken is the webhook's secret_token (not a bot token).
	SecretToken    string    `json:"secret_token,omitempty"`
	MaxConnections int       `json:"max_connections,omitempty"`
	WebhookSetAt   time.Time `json:"webhook_set_at,omitzero"`
	// AllowedUpdates is the bot's allowed_updates; nil means the default.
	AllowedUpdates []string `json:"allowed_updates,omitempty"`
	// Pending counts the updates waiting: undelivered with a webhook,
	// unconfirmed without (Redeliver copies included).
	Pending int `json:"pending"`
	// LongPolling is set while a getUpdates request of the bot waits.
	LongPolling bool `json:"long_polling,omitempty"`
	// Delivered and Failed count webhook posts answered 2xx and the others.
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// LastError and LastErrorAt describe the last failed post, as
	// getWebhookInfo does.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

// Updates returns the update state of the bot (its name or id; "" when
// the fake serves one bot).
func (s *Server) Updates(bot string) (updateState, error) {
	b, err := s.oneBot(bot)
	if err != nil {
		return updateState{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &b.x
	st.pruneLocked(s.cfg.Now())
	return updateState{
		Webhook:        st.hook.url,
		SecretToken:    st.hook.secret,
		MaxConnections: st.hook.maxConnections,
		WebhookSetAt:   st.hook.setAt,
		AllowedUpdates: slices.Clone(st.allowed),
		Pending:        st.pending(),
		LongPolling:    st.poll != nil,
		Delivered:      st.hook.delivered,
		Failed:         st.hook.failed,
		LastError:      st.hook.lastError,
		LastErrorAt:    st.hook.lastErrorAt,
	}, nil
}
