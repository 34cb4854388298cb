package telegramfake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// errClosed is returned by Wait once the server is closed.
var errClosed = errors.New("telegramfake: server closed")

// Message is the record of one accepted sendMessage or sendPhoto. Its
// fields describe the message as sent; Edited and LastEdit tell what the
// edit methods changed since (Server.Edits lists every edit), and Current
// gives what the message shows now. Messages can be compared with ==.
type Message struct {
	// MessageID is the id returned to the client; it counts up per chat.
	MessageID int `json:"message_id"`
	// Bot is the name of the bot that sent the message (see Bots):
	// DefaultBot for Config.Token, a key of Config.Tokens otherwise.
	Bot string `json:"bot"`
	// BotID is that bot's user id. No record holds a token.
	BotID int64 `json:"bot_id"`
	// ChatID is the numeric chat id; @name chats get a stable -100… id.
	ChatID int64 `json:"chat_id"`
	// ChatUsername is the channel username without the @, for chats known
	// by name.
	ChatUsername string `json:"chat_username,omitempty"`
	// Text is the text as sent, markup included; empty for a photo.
	Text string `json:"text"`
	// ParseMode is the canonical parse mode ("", "HTML" or "MarkdownV2").
	ParseMode           string `json:"parse_mode,omitempty"`
	MessageThreadID     int    `json:"message_thread_id,omitempty"`
	DisableNotification bool   `json:"disable_notification,omitempty"`
	ProtectContent      bool   `json:"protect_content,omitempty"`
	LinkPreviewDisabled bool   `json:"link_preview_disabled,omitempty"`
	// Caption is the caption of a photo as sent, markup included.
	Caption string `json:"caption,omitempty"`
	// Photo is set for a message sent with sendPhoto.
	Photo *photo `json:"photo,omitempty"`
	// ReplyTo is the message this one replies to (reply_parameters or
	// reply_to_message_id); nil when it is no reply, including a reply to a
	// missing message sent anyway under allow_sending_without_reply.
	ReplyTo *replyRef `json:"reply_to,omitempty"`
	// ReplyMarkup is the inline keyboard the message was sent with.
	ReplyMarkup *inlineKeyboardMarkup `json:"reply_markup,omitempty"`
	// Edited counts the accepted edits; LastEdit is the latest of them,
	// nil when there were none.
	Edited   int   `json:"edited,omitempty"`
	LastEdit *Edit `json:"last_edit,omitempty"`
	// Deleted is set by Server.DeleteMessage.
	Deleted bool `json:"deleted,omitempty"`
	// Paid says the message was sent with allow_paid_broadcast, and
	// Charged that it went beyond the bot's free limit and cost
	// StarsPerCharge.
	Paid    bool `json:"paid,omitempty"`
	Charged bool `json:"charged,omitempty"`
	// At is when the message was accepted, read from Config.Now.
	At time.Time `json:"at"`
}

// Stats counts Bot API requests by outcome since New or the last Reset.
//
// The counters of Server.Stats are totals over every bot, plus the requests
// that named no bot the fake knows (counted in Requests, in Rejected and,
// during an outage, in ServerErrors). Bots breaks them down by bot: each
// entry is a Stats of that bot's requests alone, for which every relation
// below holds too.
//
// Every 429 answer is counted once in TooMany and, unless it was injected
// by FaultTooMany, once in exactly one of TooManyFlood, TooManyBot and
// TooManyByChat:
//
//	TooMany = TooManyFlood + TooManyBot + ΣTooManyByChat + TooManySetWebhook + injected 429s
//
// A flood-control 429 either announces a new flood wait or answers a
// request inside one already announced; the latter are also counted in
// InsideWait, and those covered by the bot's wait or a Force429 flood in
// InsideWaitBot:
//
//	InsideWaitBot ≤ InsideWait ≤ TooManyFlood + TooManyBot + ΣTooManyByChat
//	TooManyFlood + TooManyBot + ΣTooManyByChat − InsideWait = flood waits announced
//	TooManyFlood + TooManyBot − InsideWaitBot = bot and Force429 waits announced
type Stats struct {
	// Requests counts every request that reached the Bot API handler,
	// getMe and getChat included.
	Requests int64 `json:"requests"`
	// Accepted counts delivered messages, photos and FaultAcceptThenHang
	// ones included; edits are counted in Edited.
	Accepted int64 `json:"accepted"`
	// TooMany counts all 429 answers.
	TooMany int64 `json:"too_many"`
	// TooManyFlood counts 429s caused by Force429.
	TooManyFlood int64 `json:"too_many_flood"`
	// TooManyBot counts 429s caused by the bot-wide limit: the one that
	// announced a bot flood wait and every send refused inside it.
	TooManyBot int64 `json:"too_many_bot"`
	// TooManyByChat counts 429s caused by a chat's own limit (announcing a
	// chat flood wait or inside one), keyed as Server.ChatKey names the
	// chat: "@name" or the decimal id.
	TooManyByChat map[string]int64 `json:"too_many_by_chat"`
	// InsideWait counts requests that arrived inside a flood wait already
	// announced by an earlier 429 for a scope covering them: their chat's,
	// the bot's, or a Force429 flood after its first 429 answer. The 429
	// that announces a wait is not counted. A client that honours
	// retry_after keeps it at zero.
	InsideWait int64 `json:"inside_wait"`
	// InsideWaitBot is the part of InsideWait covered by a bot-wide flood
	// wait or a Force429 flood.
	InsideWaitBot int64 `json:"inside_wait_bot"`
	// ServerErrors counts 5xx answers: injected faults and outages.
	ServerErrors int64 `json:"server_errors"`
	// Hangs counts requests held without an answer.
	Hangs int64 `json:"hangs"`
	// Rejected counts 4xx answers other than 429.
	Rejected int64 `json:"rejected"`
	// Incomplete counts send requests whose body stopped short of its
	// declared length: the client cut them off (in Rejected too). No
	// server can act on such a request; it is no send.
	Incomplete int64 `json:"incomplete"`
	// Penalties counts flood-wait extensions charged under Config.Penalty,
	// one per wait extended (a request inside both its chat's and the bot's
	// wait extends both).
	Penalties int64 `json:"penalties"`
	// Injected counts faults taken from FailNext or SetFaultRates.
	Injected int64 `json:"injected"`
	// Edited counts accepted edits (editMessageText, editMessageCaption,
	// editMessageReplyMarkup); they are not messages and not in Accepted.
	Edited int64 `json:"edited"`
	// Answered counts accepted answerCallbackQuery calls.
	Answered int64 `json:"answered"`
	// TooManySetWebhook counts setWebhook calls refused with 429 because
	// the bot set a webhook less than a second before.
	TooManySetWebhook int64 `json:"too_many_set_webhook"`
	// PaidSends counts accepted messages sent with allow_paid_broadcast,
	// and ChargedSends those of them beyond the free bot-wide limit, which
	// cost StarsPerCharge each: StarsSpent in all. PaidRefused counts paid
	// sends refused because paid broadcasts are not enabled or the balance
	// was too low (in Rejected too).
	PaidSends    int64   `json:"paid_sends"`
	ChargedSends int64   `json:"charged_sends"`
	StarsSpent   float64 `json:"stars_spent"`
	PaidRefused  int64   `json:"paid_refused"`
	// Bots holds the counters of each bot, keyed by its name (see Bots);
	// every bot the fake serves has an entry. It is nil inside an entry.
	Bots map[string]Stats `json:"bots,omitempty"`
}

// Messages returns a copy of every accepted message of every bot, in order
// of acceptance.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// MessagesOf returns a copy of the accepted messages sent by the bot named
// by bot, its name or its id in decimal, in order of acceptance. It returns
// nil for a bot the fake does not serve.
func (s *Server) MessagesOf(bot string) []Message {
	sel, err := s.selectBots([]string{bot})
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return messagesOf(s.messages, sel)
}

// messagesOf copies the messages sent by one of bots.
func messagesOf(all []Message, bots []*bot) []Message {
	var out []Message
	for _, m := range all {
		for _, b := range bots {
			if m.Bot == b.name {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// Stats returns a snapshot of the counters: the totals, and each bot's own
// in Stats.Bots.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.TooManyByChat = maps.Clone(s.stats.TooManyByChat)
	st.Penalties = 0
	st.Bots = make(map[string]Stats, len(s.bots))
	for _, b := range s.bots {
		bs := b.stats
		bs.TooManyByChat = maps.Clone(b.stats.TooManyByChat)
		bs.Penalties = b.limits.penalties
		st.Penalties += bs.Penalties
		st.Bots[b.name] = bs
	}
	return st
}

// Wait blocks until at least n messages have been accepted since New or the
// last Reset. It returns the context's error if ctx ends first and errClosed
// if the server is closed with fewer messages.
func (s *Server) Wait(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, closed, changed := len(s.messages), s.closed, s.changed
		s.mu.Unlock()
		switch {
		case have >= n:
			return nil
		case closed:
			return errClosed
		}
		select {
		case <-changed:
		case <-s.closing:
		case <-ctx.Done():
			return fmt.Errorf("telegramfake: waiting for %d messages, have %d: %w", n, have, context.Cause(ctx))
		}
	}
}

// Reset forgets messages, counters, flood-control state, chat behaviours and
// pending faults of every bot, and their updates, callback queries, photo
// files and webhooks (a webhook post under way finishes unrecorded), as well
// as the SetPhotoURL settings, as if the server had just been created with
// its Config.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
	s.notifyLocked()
}

func (s *Server) resetLocked() {
	s.messages = nil
	s.nextID = make(map[int64]int)
	s.stats = Stats{TooManyByChat: make(map[string]int64)}
	for _, b := range s.bots {
		b.stats = Stats{TooManyByChat: make(map[string]int64)}
		b.limits = newLimiter(s.cfg)
		b.wallet = newWallet(s.cfg.paidOf(b.name))
		b.faults = botFaults{}
	}
	s.behaviors = make(map[int64]ChatBehavior)
	s.faults = faultState{}
	s.resetExtrasLocked()
}

// notifyLocked wakes every Wait call so it can look at the records again.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
