package botapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
)

// placeholderMessageID is result.message_id when the answer came before
// the message was sent: Telegram numbers a chat's messages from 1.
const placeholderMessageID = 0

// answer writes the Message a send returns: with the message_id Telegram
// gave when the message was sent within the wait, with the failure when it
// failed for good, else with the placeholder.
func (h *handler) answer(w http.ResponseWriter, r *http.Request, c call, p httpapi.Principal, msg jobs.SendMessage, res jobs.Result) {
	note := &heraldNote{ID: res.TaskID, State: string(ledger.StateQueued)}
	out := messageOf(c.bot, msg)
	rec, ok := h.await(r.Context(), cmpBot(c.bot), p.Name, res)
	switch {
	case ok && rec.State == ledger.StateSent && len(rec.MessageIDs) > 0:
		note.State = string(rec.State)
		out.MessageID = rec.MessageIDs[0]
		if id, err := strconv.ParseInt(rec.Chat, 10, 64); err == nil {
			out.Chat.ID = id
			if out.SenderChat != nil {
				// A channel named by @username: its id is known now.
				out.SenderChat = &out.Chat
			} else {
				out.Chat.Type = chatType(rec.Chat)
			}
		}
		if rec.Settled > 0 {
			out.Date = rec.Settled / 1000
		}
	case ok && rec.State == ledger.StateFailed:
		h.metrics.answers.WithLabelValues(answerFailed).Inc()
		writeRefusal(w, failure(rec))
		return
	case ok:
		note.State = string(rec.State)
	}
	result := answerPlaceholder
	if out.MessageID != placeholderMessageID {
		result = answerSent
	}
	h.metrics.answers.WithLabelValues(result).Inc()
	writeResult(w, out, note)
}

// await polls the ledger for the record of the message just stored, for up
// to Config.ResultWait, when a waiting slot is free for the token. It
// returns false when the message did not settle in time (or nothing may
// wait). A Redis error ends the wait: the message is stored, and the
// answer says so.
func (h *handler) await(ctx context.Context, bot, token string, res jobs.Result) (ledger.Record, bool) {
	if h.cfg.Ledger == nil || h.cfg.ResultWait < 0 || res.Coalesced || !h.waiting.take(token) {
		return ledger.Record{}, false
	}
	defer h.waiting.release(token)
	ctx, cancel := context.WithTimeout(ctx, h.cfg.ResultWait)
	defer cancel()
	pause := 10 * time.Millisecond
	for {
		rec, ok, err := h.cfg.Ledger.Get(ctx, bot, res.TaskID)
		if err != nil {
			return ledger.Record{}, false
		}
		if ok && rec.State.Settled() {
			return rec, true
		}
		select {
		case <-ctx.Done():
			return ledger.Record{}, false
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// failure is the refusal of a message that failed for good within the
// wait, in the words the worker recorded (Telegram's, for a refusal).
func failure(rec ledger.Record) *refusal {
	desc := rec.Error
	if desc == "" {
		desc = rec.Reason
	}
	switch {
	case strings.HasPrefix(desc, "Forbidden"):
		return &refusal{Code: http.StatusForbidden, Description: desc}
	case strings.HasPrefix(desc, "Bad Request"):
		return &refusal{Code: http.StatusBadRequest, Description: desc}
	}
	return badRequest(desc)
}

// message is Telegram's Message object as the front fills it.
type message struct {
	MessageID int   `json:"message_id"`
	ThreadID  int   `json:"message_thread_id,omitempty"`
	From      *user `json:"from,omitempty"`
	// SenderChat is the channel of a channel post, which has no From.
	SenderChat *chat       `json:"sender_chat,omitempty"`
	Chat       chat        `json:"chat"`
	Date       int64       `json:"date"`
	Text       string      `json:"text,omitempty"`
	Caption    string      `json:"caption,omitempty"`
	Markup     *keyboardJS `json:"reply_markup,omitempty"`
}

// chat is Telegram's Chat object as far as the message names it.
type chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Username string `json:"username,omitempty"`
}

// keyboardJS is an inline keyboard as Telegram echoes it.
type keyboardJS struct {
	Inline [][]jobs.Button `json:"inline_keyboard"`
}

// messageOf is the Message describing msg before it is sent: the chat
// as addressed, the text without its markup, the time of storing.
func messageOf(bot string, msg jobs.SendMessage) message {
	me := botUser(bot)
	out := message{MessageID: placeholderMessageID, ThreadID: msg.MessageThreadID, From: &me, Date: msg.CreatedAt.Unix()}
	if id, err := strconv.ParseInt(msg.Chat, 10, 64); err == nil {
		out.Chat = chat{ID: id, Type: chatType(msg.Chat)}
	} else {
		// Only a channel or a public supergroup has a @username a bot
		// can send to; its id is known once the message is sent.
		out.Chat = chat{Type: "channel", Username: strings.TrimPrefix(msg.Chat, "@")}
		out.From, out.SenderChat = nil, &out.Chat
	}
	text := msg.Text
	if mode, err := markup.ParseMode(msg.ParseMode); err == nil {
		if plain, err := markup.Plain(msg.Text, mode); err == nil {
			text = plain
		}
	}
	if msg.Photo != nil {
		out.Caption = text
	} else {
		out.Text = text
	}
	if rows := msg.Buttons.Rows(); len(rows) > 0 {
		out.Markup = &keyboardJS{Inline: rows}
	}
	return out
}

// chatType is the type of the chat with numeric id: positive ids are
// people, -100... ids supergroups (or channels, which the id alone does not
// tell apart), other negative ids basic groups.
func chatType(id string) string {
	switch {
	case strings.HasPrefix(id, "-100"):
		return "supergroup"
	case strings.HasPrefix(id, "-"):
		return "group"
	}
	return "private"
}
