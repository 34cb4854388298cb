package ratelimit

import (
	"context"
	"fmt"
)

// Marks tells whether a mark stops the message taskID to chat: Blocked
// when the chat blocked the bot, Cancelled when the message was cancelled,
// 0 when neither. One MGET; a message that waits in memory for its slot
// asks it when a cancel is announced (keys.StopChannel), without touching
// its slot.
func (l *Limiter) Marks(ctx context.Context, chat, taskID string) (Kind, error) {
	m, err := l.rdb.MGet(ctx, l.ks.Blocked(chat), l.ks.Cancel(taskID)).Result()
	switch {
	case err != nil:
		return 0, fmt.Errorf("ratelimit: marks: %w", err)
	case len(m) == 2 && m[0] != nil:
		return Blocked, nil
	case len(m) == 2 && m[1] != nil:
		return Cancelled, nil
	}
	return 0, nil
}
