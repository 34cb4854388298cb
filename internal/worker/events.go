package worker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/statushook"
)

// messageEvent is the data of a message.* status event: the message's task
// id and its status, as GET /v1/messages/{id} shows it.
type messageEvent struct {
	TaskID string `json:"task_id"`
	ledger.Status
}

// chatEvent is the data of a chat.blocked event.
type chatEvent struct {
	// TaskID is the message whose send met the 403.
	TaskID string `json:"task_id"`
	Bot    string `json:"bot"`
	Chat   string `json:"chat"`
	chats.Block
}

// announce emits the status event of a message settled in this attempt (or
// found settled by it, after a worker died between its record and its
// event) to the message's callback URL. The event is stored before the task
// is acknowledged: when Redis does not take it, the task is retried, and
// the retry finds the settled record and emits again (the event's id makes
// a repeat harmless).
func (h *handler) announce(ctx context.Context, r *run, d *delivery) error {
	rec := d.prog.settled
	if rec == nil || d.msg.CallbackURL == "" {
		return nil
	}
	typ := statushook.TypeMessageSent
	if rec.State == ledger.StateCancelled {
		return nil // no event type for a cancel: the API's caller asked for it
	}
	err := h.emit(ctx, r, d.msg.CallbackURL, typ, *rec)
	if err == nil || !retryable(err) {
		return nil
	}
	r.log.Warn("could not store the message's status callback; retrying the task to store it", "error", err)
	return broker.Retry(time.Second, "callback", err)
}

// emit stores one message event. Errors that retrying cannot mend (callbacks
// off, a URL the worker's policy refuses) are logged here.
func (h *handler) emit(ctx context.Context, r *run, url, typ string, rec ledger.Record) error {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ev := statushook.Event{ID: statushook.EventID(r.ID, typ), Type: typ, Timestamp: time.UnixMilli(rec.Settled),
		Data: messageEvent{TaskID: r.ID, Status: ledger.StatusOf(r.ID, r.botLabel(), rec)}}
	err := h.events.Emit(ectx, url, ev)
	if err != nil && !retryable(err) {
		r.log.Warn("status callback not sent", "type", typ, "error", err)
	}
	return err
}

// emitFailed stores the message.failed event of a message being archived.
// A Redis failure is logged: the archive goes ahead (retrying a failed
// message would only fail it again).
func (h *handler) emitFailed(ctx context.Context, r *run, rec ledger.Record) {
	if r.d == nil || r.d.msg.CallbackURL == "" {
		return
	}
	if err := h.emit(ctx, r, r.d.msg.CallbackURL, statushook.TypeMessageFailed, rec); err != nil && retryable(err) {
		r.log.Warn("could not store the message.failed callback", "error", err)
	}
}

// emitBlocked stores the chat.blocked event of a chat this attempt marked
// blocked, for the message's callback URL.
func (h *handler) emitBlocked(ctx context.Context, r *run, b chats.Block) {
	if r.d == nil || r.d.msg.CallbackURL == "" {
		return
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// One event per blocking: a chat that comes back and blocks the bot
	// again is news again.
	subject := r.bot.name + "_" + r.d.chat + "_" + strconv.FormatInt(b.Since.UnixMilli(), 10)
	ev := statushook.Event{ID: statushook.EventID(subject, statushook.TypeChatBlocked), Type: statushook.TypeChatBlocked,
		Timestamp: b.Since, Data: chatEvent{TaskID: r.ID, Bot: r.bot.name, Chat: r.d.chat, Block: b}}
	if err := h.events.Emit(ectx, r.d.msg.CallbackURL, ev); err != nil {
		r.log.Warn("could not store the chat.blocked callback", "error", err)
	}
}

// retryable reports whether an Emit error may pass on a later try: a Redis
// failure, not callbacks being off or a refused URL.
func retryable(err error) bool {
	var ue *statushook.URLError
	return !errors.Is(err, statushook.ErrOff) && !errors.As(err, &ue)
}
