package interact

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// In a group, a command may name the bot it is for: "/oncall@herald_bot".
// Telegram hands such a command to every bot that reads the group's
// messages (a bot out of privacy mode, or an administrator), so a bot
// answers it only when the name is its own. A command without a name is
// for every bot.

// addressee is the bot username a command text names after its "@" ("":
// none).
func addressee(text string) string {
	head, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	head, _, _ = strings.Cut(head, "\n")
	_, name, _ := strings.Cut(head, "@")
	return name
}

// usernames caches each bot's username (getMe), which does not change
// while a process runs.
type usernames struct {
	mu    sync.Mutex
	names map[string]string
}

// of returns the username of the bot named name, asking api once.
func (u *usernames) of(ctx context.Context, name string, api bot) (string, error) {
	u.mu.Lock()
	got, ok := u.names[name]
	u.mu.Unlock()
	if ok {
		return got, nil
	}
	me, err := api.GetMe(ctx)
	if err != nil {
		return "", err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.names == nil {
		u.names = map[string]string{}
	}
	u.names[name] = me.Username
	return me.Username, nil
}

// forOthers reports whether the command text is addressed to another bot
// than the one named bot.
func (h *handler) forOthers(ctx context.Context, bot, text string) (bool, error) {
	to := addressee(text)
	if to == "" {
		return false, nil
	}
	api := h.cfg.Bots[bot]
	if api == nil {
		// A fleet mid-rollout: another worker may serve the bot.
		return false, fmt.Errorf("this worker does not serve the bot %q, whose username the command may name", bot)
	}
	me, err := h.names.of(ctx, bot, api)
	if err != nil {
		return false, err
	}
	return !strings.EqualFold(to, me), nil
}
