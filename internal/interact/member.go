package interact

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// blockedHook is told of a chat that an update marked blocked (the
// chat.blocked callback); handlerConfig.OnBlocked.
type blockedHook func(ctx context.Context, bot, chat string, b chats.Block) error

// member applies a my_chat_member update, a change of the bot's own
// membership of a chat: a chat the bot left, was removed from or was
// blocked in is marked blocked for it, and one it is back in is cleared
// (chats.Store.Follow, in update_id order per chat). A newly blocked chat
// is handed to OnBlocked; a failure there retries the task, which hands
// it over again.
func (h *handler) member(ctx context.Context, t broker.Task, pl payload, m *telegram.ChatMemberUpdated) error {
	st := m.NewChatMember
	log := h.log.With("task_id", t.ID, "bot", pl.Bot, "update_id", pl.Update.UpdateID, "chat", m.Chat.ID,
		"chat_type", m.Chat.Type, "old_status", m.OldChatMember.Status, "status", st.Status, "attempt", t.Attempt)
	names := memberNames(m)
	if names == nil {
		log.Warn("my_chat_member update without a chat id; ignored")
		return nil
	}
	block, known := blockOf(m)
	if !known {
		log.Info("my_chat_member update with a status Herald does not know; ignored")
		return nil
	}
	changed, err := h.cfg.Chats.Follow(ctx, pl.Bot, names, pl.Update.UpdateID, block)
	switch {
	case errors.Is(err, chats.ErrInvalid):
		log.Error("my_chat_member update names a chat Herald cannot store; dropped", "error", err)
		return broker.Archive("invalid_update", err)
	case err != nil:
		log.Warn("could not apply the my_chat_member update; retrying", "error", err)
		return broker.Retry(h.backoff(t.Attempt), "redis", err)
	case !changed:
		log.Debug("my_chat_member update changes nothing (already so, or older than the last one applied)")
		return nil
	case block == nil:
		log.Info("the chat is back: messages to it are sent again")
		return nil
	}
	log.Info("the chat blocked or removed the bot: messages to it fail at once (chat_blocked) until it is back",
		"reason", block.Reason, "by", m.From.Name())
	return h.blocked(ctx, log, t, pl.Bot, names[0], *block)
}

// blocked hands a newly blocked chat to OnBlocked.
func (h *handler) blocked(ctx context.Context, log *slog.Logger, t broker.Task, bot, chat string, b chats.Block) error {
	if h.cfg.OnBlocked == nil {
		return nil
	}
	if err := h.cfg.OnBlocked(ctx, bot, chat, b); err != nil {
		log.Warn("could not report the blocked chat; retrying", "error", err)
		return broker.Retry(h.backoff(t.Attempt), "on_blocked", err)
	}
	return nil
}

// memberNames are the names of the update's chat that messages may use:
// its id, and for a group or channel with a public username that @name
// too. nil when the update names no chat.
func memberNames(m *telegram.ChatMemberUpdated) []string {
	if m.Chat.ID == 0 {
		return nil
	}
	names := []string{strconv.FormatInt(m.Chat.ID, 10)}
	if m.Chat.Type != chatPrivate && keys.ValidUsername(m.Chat.Username) {
		names = append(names, "@"+m.Chat.Username)
	}
	return names
}

// chatPrivate is the type of a user's chat with the bot.
const chatPrivate = "private"

// blockOf reads the bot's new status: the Block for a chat it can no
// longer write to, nil for one it is in; known is false for a status the
// Bot API does not document.
func blockOf(m *telegram.ChatMemberUpdated) (b *chats.Block, known bool) {
	since := time.Now()
	if m.Date > 0 {
		since = time.Unix(m.Date, 0)
	}
	gone := func(reason string) (*chats.Block, bool) {
		return &chats.Block{Since: since, Reason: reason, Source: chats.SourceMyChatMember}, true
	}
	st := m.NewChatMember
	switch {
	case st.Status == "kicked" && m.Chat.Type == chatPrivate:
		return gone(chats.ReasonBlocked)
	case st.Status == "kicked":
		return gone(chats.ReasonKicked)
	case st.Status == "left", st.Status == "restricted" && !st.IsMember:
		return gone(chats.ReasonLeft)
	case st.Status == "member", st.Status == "administrator", st.Status == "creator", st.Status == "restricted":
		return nil, true
	}
	return nil, false
}
