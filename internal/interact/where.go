package interact

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
)

// Where a press comes from, as checkChat tells.
type chatCheck int

const (
	// chatSame: the chat the alert was sent to.
	chatSame chatCheck = iota
	// chatOther: another chat, holding a copy of the message.
	chatOther
	// chatUnsure: no way to tell, which refuses the press as chatOther
	// does.
	chatUnsure
	// chatDirect: the private chat of the user who pressed, where an
	// escalation sent them the alert's buttons (buttons.AllowDirect).
	// The press acts on the alert's message as one in its chat does.
	chatDirect
)

// checkChat tells where the press comes from: the alert's chat
// (homeChat), or else the presser's private chat with the bot when an
// escalation sent the buttons there.
func (h *handler) checkChat(ctx context.Context, p *press) (chatCheck, error) {
	where, err := h.homeChat(ctx, p)
	if err != nil || where == chatSame {
		return where, err
	}
	m := p.q.Message
	if m == nil || m.Chat.ID <= 0 || m.Chat.ID != p.q.From.ID {
		return where, nil
	}
	ok, err := buttons.DirectAllowed(ctx, h.rdb, p.bot, p.ref, m.Chat.ID)
	switch {
	case err != nil:
		return 0, err
	case ok:
		return chatDirect, nil
	}
	return where, nil
}

// homeChat tells whether the press comes from the chat the alert was
// sent to, so that a copy of the message elsewhere cannot act on it. The
// alert's chat may be a group that became a supergroup (the worker's
// record of the migration is used), or an @username: then it is the id the
// worker resolved it to while that is remembered, else the pressed chat
// when Telegram names it by that username (groups and channels only). A
// press without a chat (a message sent in inline mode, which Herald never
// sends) and an @username whose id is no longer known are chatUnsure.
func (h *handler) homeChat(ctx context.Context, p *press) (chatCheck, error) {
	m := p.q.Message
	if m == nil || m.Chat.ID == 0 || p.subj.Chat == "" {
		return chatUnsure, nil
	}
	got := strconv.FormatInt(m.Chat.ID, 10)
	want := p.subj.Chat
	if name, ok := strings.CutPrefix(want, "@"); ok {
		id, err := h.rdb.Get(ctx, p.keys.ChatID(want)).Result()
		switch {
		case errors.Is(err, redis.Nil):
			if m.Chat.ID < 0 && m.Chat.Username != "" && strings.EqualFold(m.Chat.Username, name) {
				return chatSame, nil
			}
			return chatUnsure, nil
		case err != nil:
			return 0, err
		}
		want = id
	}
	if want == got {
		return chatSame, nil
	}
	to, err := h.rdb.HGet(ctx, p.keys.Migrations(), want).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return chatOther, nil
	case err != nil:
		return 0, err
	}
	if to == got {
		return chatSame, nil
	}
	return chatOther, nil
}
