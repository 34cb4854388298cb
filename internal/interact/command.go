package interact

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/telegram"
)

// commander answers the bot commands Herald knows in a chat (/oncall);
// ok is false for a text that is no such command. *roster.Commands
// implements it.
type commander interface {
	Answer(ctx context.Context, chat, text string) (reply string, ok bool, err error)
}

var _ commander = (*roster.Commands)(nil)

// command answers a message of an update when it is a command Herald
// knows, for this bot (a command naming another bot, "/oncall@other_bot",
// is left to it): the reply goes to the message's chat (and forum topic)
// through the queue, like any message, with an idempotency key of its own
// so that an update handled twice replies once. Other messages are
// ignored.
func (h *handler) command(ctx context.Context, t broker.Task, bot string, m *telegram.UpdateMessage) error {
	if h.cfg.Commands == nil || !strings.HasPrefix(m.Text, "/") || m.Chat.ID == 0 {
		return nil
	}
	chat := strconv.FormatInt(m.Chat.ID, 10)
	log := h.log.With("task_id", t.ID, "bot", bot, "chat", chat, "user_id", m.From.ID, "attempt", t.Attempt)
	switch other, err := h.forOthers(ctx, bot, m.Text); {
	case err != nil:
		return h.commandRetry(t, log, "telegram", err)
	case other:
		log.Debug("command for another bot ignored", "command", strings.Fields(m.Text)[0])
		return nil
	}
	reply, ok, err := h.cfg.Commands.Answer(ctx, chat, m.Text)
	switch {
	case !ok:
		return nil
	case err != nil:
		return h.commandRetry(t, log, "redis", err)
	}
	msg := jobs.SendMessage{Bot: bot, Chat: chat, Text: reply,
		IdempotencyKey: "telegram-command:" + bot + ":" + chat + ":" + strconv.Itoa(m.MessageID)}
	if m.IsTopic {
		msg.MessageThreadID = m.ThreadID
	}
	_, err = h.cfg.Edits.Enqueue(ctx, jobs.Request{Message: msg, Queue: h.cfg.EditQueue})
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		log.Error("the reply to a command was refused", "error", err)
		return nil
	case err != nil:
		return h.commandRetry(t, log, "redis", err)
	}
	log.Info("command answered", "command", strings.Fields(m.Text)[0], "user", m.From.Name())
	return nil
}

// commandRetry retries a command after a failure that may pass (reason:
// what failed), until MaxRetry: by then the answer would come too late to
// matter.
func (h *handler) commandRetry(t broker.Task, log *slog.Logger, reason string, err error) error {
	if t.Attempt >= h.cfg.MaxRetry {
		return broker.Archive(reason, err)
	}
	log.Warn("command not answered; retrying", "reason", reason, "error", err)
	return broker.Retry(h.backoff(t.Attempt), reason, err)
}
