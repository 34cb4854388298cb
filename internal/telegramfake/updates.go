package telegramfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Updates: what Telegram tells a bot (here callback_query updates, made by
// Press, my_chat_member updates, made by SetChat, and message updates, made
// by Say), queued per bot and handed over by getUpdates or posted to
// the bot's webhook, as the Bot API server does (tdlib/telegram-bot-api,
// Client::process_get_updates_query and WebhookActor).

// updateTypes are the update types the Bot API knows, for allowed_updates.
var updateTypes = []string{
	"message", "edited_message", "channel_post", "edited_channel_post", "business_connection",
	"business_message", "edited_business_message", "deleted_business_messages", "message_reaction",
	"message_reaction_count", "inline_query", "chosen_inline_result", "callback_query", "shipping_query",
	"pre_checkout_query", "purchased_paid_media", "poll", "poll_answer", "my_chat_member", "chat_member",
	"chat_join_request", "chat_boost", "removed_chat_boost",
}

// callbackQueryLifetime is how long a callback_query update waits to be
// received before the Bot API drops it (Client::add_update timeout 150).
const callbackQueryLifetime = 150 * time.Second

// maxLongPoll is the longest getUpdates timeout the Bot API honours, in
// seconds (LONG_POLL_MAX_TIMEOUT).
const maxLongPoll = 50

// update is one update of a bot: its id and JSON, made when it happened.
type update struct {
	id      int
	body    json.RawMessage
	expires time.Time // Config.Now time after which it is dropped undelivered
	query   *CallbackQuery
}

// delivery is an update waiting to be received: in the queue until
// confirmed (getUpdates) or answered 2xx (webhook), or a copy made by
// Redeliver, which is handed over once.
type delivery struct {
	u         *update
	attempts  int           // failed webhook attempts
	delay     time.Duration // the webhook backoff, in Telegram time
	notBefore time.Time     // real time before which the webhook does not retry
}

// longPoll is a getUpdates request waiting for updates. Another request
// that takes its place, or a setWebhook, ends it with a 409 by closing
// done after setting reason.
type longPoll struct {
	done   chan struct{}
	reason string
}

// botState is a bot's updates, webhook, callback queries and photo files,
// guarded by Server.mu.
type botState struct {
	files   map[string]*photo // file_id → photo
	fileSeq int64

	queries  map[string]*CallbackQuery // by id
	queryLog []*CallbackQuery          // in order of pressing
	querySeq int64

	nextUpdateID int
	updates      map[int]*update // every update made, for Redeliver
	queue        []*delivery     // waiting updates, by id
	again        []*delivery     // Redeliver copies, oldest first
	allowed      []string        // allowed_updates; nil means the default

	poll *longPoll     // the getUpdates request waiting, or nil
	wake chan struct{} // closed and replaced when there is news for pollers and the webhook

	hook           webhook
	hookGen        int // counts webhook changes; a delivery loop serves one generation
	nextSetWebhook time.Time
}

// reset empties the state of b, as Reset does. A long poll under way
// stays and is woken; a webhook delivery loop stops.
func (b *bot) resetState() {
	old := &b.x
	b.x = botState{
		files:        make(map[string]*photo),
		queries:      make(map[string]*CallbackQuery),
		updates:      make(map[int]*update),
		nextUpdateID: firstUpdateID(b.user.ID),
		poll:         old.poll,
		wake:         old.wake,
		hookGen:      old.hookGen + 1,
	}
	if b.x.wake == nil {
		b.x.wake = make(chan struct{})
	}
	b.x.signal()
}

// firstUpdateID is where a bot's update ids start: "a certain positive
// number", here one that differs between bots.
func firstUpdateID(botID int64) int {
	return 10_000_000*int(1+botID%100) + 1
}

// signal wakes every poller and the webhook loop of the bot.
func (st *botState) signal() {
	close(st.wake)
	st.wake = make(chan struct{})
}

// allows reports whether the bot receives updates of kind.
func (st *botState) allows(kind string) bool {
	if st.allowed == nil {
		return kind != "chat_member" && kind != "message_reaction" && kind != "message_reaction_count"
	}
	return slices.Contains(st.allowed, kind)
}

// setAllowed applies an allowed_updates parameter as the Bot API does: an
// absent or unreadable one changes nothing, a list naming no known type
// restores the default. It applies to updates made from now on.
func (st *botState) setAllowed(raw string) {
	if strings.TrimSpace(raw) == "" {
		return
	}
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return
	}
	var out []string
	for _, n := range names {
		n = strings.ToLower(n)
		if slices.Contains(updateTypes, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	st.allowed = out
}

// pushLocked queues a new update and wakes its receivers.
func (st *botState) pushLocked(u *update) {
	st.updates[u.id] = u
	st.queue = append(st.queue, &delivery{u: u})
	st.signal()
}

// pruneLocked drops the updates that expired before being received.
func (st *botState) pruneLocked(now time.Time) {
	live := func(d *delivery) bool { return now.Before(d.u.expires) }
	st.queue = slices.DeleteFunc(st.queue, func(d *delivery) bool { return !live(d) })
	st.again = slices.DeleteFunc(st.again, func(d *delivery) bool { return !live(d) })
}

// pending is the number of updates waiting to be received.
func (st *botState) pending() int { return len(st.queue) + len(st.again) }

// confirmLocked applies a getUpdates offset: a positive offset forgets the
// updates with lower ids (an offset past the next update id is ignored, as
// the Bot API falls back to the head of the queue); a negative one forgets
// all but the last -offset updates.
func (st *botState) confirmLocked(offset int) {
	switch {
	case offset < 0:
		if keep := -offset; len(st.queue) > keep {
			st.queue = slices.Delete(st.queue, 0, len(st.queue)-keep)
		}
	case offset > 0 && offset <= st.nextUpdateID:
		st.queue = slices.DeleteFunc(st.queue, func(d *delivery) bool { return d.u.id < offset })
	}
}

// takeLocked returns up to limit updates for a getUpdates answer:
// Redeliver copies first (each handed over once), then the queue, which
// keeps them until an offset confirms them.
func (st *botState) takeLocked(limit int) []json.RawMessage {
	out := []json.RawMessage{}
	for len(st.again) > 0 && len(out) < limit {
		d := st.again[0]
		st.again = st.again[1:]
		out = append(out, d.u.body)
		d.u.delivered()
	}
	for _, d := range st.queue {
		if len(out) >= limit {
			break
		}
		out = append(out, d.u.body)
		d.u.delivered()
	}
	return out
}

// delivered counts one handing over of the update to the bot.
func (u *update) delivered() {
	if u.query != nil {
		u.query.Deliveries++
	}
}

// intParam reads an integer parameter as the Bot API does: absent or
// unreadable means def, and the value is clamped to [lo, hi].
func intParam(v string, def, lo, hi int) int {
	n := def
	if v = strings.TrimSpace(v); v != "" {
		n, _ = strconv.Atoi(v)
	}
	return min(max(n, lo), hi)
}

var (
	errWebhookActive = &apiError{code: http.StatusConflict,
		desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	conflictOtherPoll = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	conflictSetHook   = "Conflict: terminated by setWebhook request"
)

// getUpdates answers the bot's pending updates, waiting up to timeout
// seconds (at most 50, Telegram time) for one when there are none. It is
// refused while a webhook is set. A long poll that another getUpdates of
// the same bot replaces, or that setWebhook ends, is answered 409.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, b *bot) {
	params, err := readParams(w, r)
	s.mu.Lock()
	if b.x.hook.url != "" {
		s.mu.Unlock()
		s.fail(w, b, errWebhookActive)
		return
	}
	if err != nil {
		s.mu.Unlock()
		s.fail(w, b, badRequest("can't parse request: "+err.Error()))
		return
	}
	offset := intParam(params["offset"], 0, -1<<31, 1<<31-1)
	limit := intParam(params["limit"], 100, 1, 100)
	timeout := intParam(params["timeout"], 0, 0, maxLongPoll)
	b.x.setAllowed(params["allowed_updates"])
	b.x.pruneLocked(s.cfg.Now())
	b.x.confirmLocked(offset)
	out := b.x.takeLocked(limit)
	if len(out) > 0 || timeout == 0 {
		s.notifyLocked()
		s.mu.Unlock()
		writeResult(w, out)
		return
	}
	b.x.abortPollLocked(conflictOtherPoll)
	lp := &longPoll{done: make(chan struct{})}
	b.x.poll = lp
	wake := b.x.wake
	s.notifyLocked()
	s.mu.Unlock()
	s.longPoll(w, r, b, lp, wake, limit, timeout)
}

// longPoll holds the bot's long poll lp open for up to timeout seconds
// (Telegram time), answering up to limit updates as soon as one is pending
// and no webhook is set, or what there is at the timeout. A conflict that
// ends lp is answered 409; a client gone is not answered, and a server
// closing aborts the request. wake is the bot's news channel when lp began.
func (s *Server) longPoll(w http.ResponseWriter, r *http.Request, b *bot, lp *longPoll, wake chan struct{}, limit, timeout int) {
	timer := time.NewTimer(toReal(time.Duration(timeout)*time.Second, s.cfg.TimeScale))
	defer timer.Stop()
	finish := func() []json.RawMessage { // under s.mu
		b.x.dropPollLocked(lp)
		b.x.pruneLocked(s.cfg.Now())
		out := b.x.takeLocked(limit)
		s.notifyLocked()
		return out
	}
	for {
		select {
		case <-wake:
			s.mu.Lock()
			if b.x.poll != lp { // ended by a conflict, which set its reason
				reason := lp.reason
				s.mu.Unlock()
				s.fail(w, b, &apiError{code: http.StatusConflict, desc: reason})
				return
			}
			b.x.pruneLocked(s.cfg.Now())
			if b.x.hook.url == "" && b.x.pending() > 0 {
				out := finish()
				s.mu.Unlock()
				writeResult(w, out)
				return
			}
			wake = b.x.wake
			s.mu.Unlock()
		case <-lp.done:
			s.mu.Lock()
			reason := lp.reason
			s.mu.Unlock()
			s.fail(w, b, &apiError{code: http.StatusConflict, desc: reason})
			return
		case <-timer.C:
			s.mu.Lock()
			out := finish()
			s.mu.Unlock()
			writeResult(w, out)
			return
		case <-r.Context().Done():
			s.mu.Lock()
			b.x.dropPollLocked(lp)
			s.mu.Unlock()
			return
		case <-s.closing:
			s.mu.Lock()
			b.x.dropPollLocked(lp)
			s.mu.Unlock()
			panic(http.ErrAbortHandler)
		}
	}
}

// dropPollLocked forgets the bot's long poll when it is still lp.
func (st *botState) dropPollLocked(lp *longPoll) {
	if st.poll == lp {
		st.poll = nil
	}
}

// abortPollLocked ends the bot's long poll, if any, with a 409.
func (st *botState) abortPollLocked(reason string) {
	if st.poll != nil {
		st.poll.reason = reason
		close(st.poll.done)
		st.poll = nil
	}
}
