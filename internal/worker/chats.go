package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// resolveChat follows a remembered group-to-supergroup migration. A
// migration is permanent, so positive answers are cached for good; a negative
// answer is cached briefly (a migration seen by another worker is learnt
// within that time, or from Telegram's own answer on the next send).
func (h *handler) resolveChat(ctx context.Context, b *bot, chat string) (string, error) {
	if strings.HasPrefix(chat, "@") {
		return h.resolveUsername(ctx, b, chat)
	}
	if !ratelimit.IsGroup(chat) {
		return chat, nil // only (non-super)groups migrate
	}
	if to, ok := h.migrations.get(b.name, chat); ok {
		return to, nil
	}
	to, err := h.rdb.HGet(ctx, b.keys.Migrations(), chat).Result()
	switch {
	case errors.Is(err, redis.Nil):
		h.migrations.put(b.name, chat, chat, time.Minute)
		return chat, nil
	case err != nil:
		return "", fmt.Errorf("read chat migrations: %w", err)
	}
	h.migrations.put(b.name, chat, to, 0)
	return to, nil
}

// usernameTTL is how long an @username's chat id is trusted: a username can
// pass to another chat, which is rare, so a day is plenty.
const usernameTTL = 24 * time.Hour

// resolveUsername maps an @username to its chat's numeric id (getChat, then
// remembered in Redis and in the process), so that messages to "@Name",
// "@name" and the id share one schedule. Without a chatResolver the name is
// used as it is.
func (h *handler) resolveUsername(ctx context.Context, b *bot, chat string) (string, error) {
	if b.resolver == nil {
		return chat, nil
	}
	name := keys.NormChat(chat)
	if id, ok := h.migrations.get(b.name, name); ok {
		return id, nil
	}
	id, err := h.rdb.Get(ctx, b.keys.ChatID(name)).Result()
	switch {
	case err == nil:
		h.migrations.put(b.name, name, id, time.Hour)
		return id, nil
	case !errors.Is(err, redis.Nil):
		return "", fmt.Errorf("read chat id of %s: %w", name, err)
	}
	n, err := b.resolver.ChatID(ctx, chat)
	if err != nil {
		return "", err
	}
	id = strconv.FormatInt(n, 10)
	if err := h.rdb.Set(ctx, b.keys.ChatID(name), id, usernameTTL).Err(); err != nil {
		h.log.Warn("could not remember a chat id", "chat", name, "error", err)
	}
	h.migrations.put(b.name, name, id, time.Hour)
	return id, nil
}
