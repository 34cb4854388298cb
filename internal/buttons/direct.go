package buttons

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// A subject's buttons are pressed in its own chat, where its message is.
// An escalation also sends them to people by direct message (the same
// buttons, the same reference): a press there acts on the alert's message
// as one in its chat does. The chats where that is allowed are kept beside
// the subject, in keys.Space.ButtonChats.

// RefOf is the subject reference the buttons of kb carry, "" when none
// is Herald's.
func RefOf(kb *jobs.Keyboard) string {
	if kb == nil {
		return ""
	}
	for _, row := range *kb {
		for _, b := range row {
			if _, ref, ok := ParseData(b.Data); ok {
				return ref
			}
		}
	}
	return ""
}

// Buttons is the keyboard of s's actions under the reference ref, as
// Keyboard made it, for a copy of the buttons elsewhere; nil when s has
// no actions.
func Buttons(s Subject, ref string) *jobs.Keyboard {
	row := make([]jobs.Button, 0, len(s.Actions))
	for _, a := range s.Actions {
		row = append(row, jobs.Button{Text: Label(a), Data: Data(a, ref)})
	}
	if len(row) == 0 {
		return nil
	}
	return &jobs.Keyboard{row}
}

// AllowDirect lets the user with id press the buttons of the subject ref
// (of bot) in their private chat with the bot, for ttl: the escalation
// that messages them adds its buttons to the message. Call it before the
// message is queued, so that no press can come before it.
func AllowDirect(ctx context.Context, rdb redis.Cmdable, bot, ref string, user int64, ttl time.Duration) error {
	if user <= 0 {
		return fmt.Errorf("callbacks: AllowDirect: %d is no user id", user)
	}
	key := keys.Bot(bot).ButtonChats(ref)
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, key, strconv.FormatInt(user, 10))
		p.PExpire(ctx, key, ttl)
		return nil
	}); err != nil {
		return fmt.Errorf("callbacks: allow the buttons in a direct message: %w", err)
	}
	durable.Wrote(ctx, key)
	return nil
}

// DirectAllowed reports whether the buttons of the subject ref (of bot)
// may be pressed in the private chat with user id (AllowDirect).
func DirectAllowed(ctx context.Context, rdb redis.Cmdable, bot, ref string, user int64) (bool, error) {
	if user <= 0 {
		return false, nil
	}
	ok, err := rdb.SIsMember(ctx, keys.Bot(bot).ButtonChats(ref), strconv.FormatInt(user, 10)).Result()
	if err != nil {
		return false, fmt.Errorf("callbacks: look up the direct messages of the buttons: %w", err)
	}
	return ok, nil
}
