package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/chats"
)

const chatUsage = `usage: producer chat BOT CHAT      show whether CHAT blocked BOT (JSON)
       producer unblock BOT CHAT   clear CHAT's blocked mark, so messages to it are sent again

BOT is one of HERALD_BOTS; CHAT a numeric chat id or an @username.
Both read Redis (REDIS_URL) directly. Exit codes: 0 done, 1 Redis
unavailable (safe to retry), 2 bad usage.`

// ChatCommand runs `producer chat BOT CHAT` (cmd "chat": prints the
// chat's state as JSON) or `producer unblock BOT CHAT` (cmd "unblock":
// clears the blocked mark, source api, and prints the state and whether
// it was blocked). bots are HERALD_BOTS. Failures are one line on stderr
// starting with "producer <cmd>: ". It returns the exit code: 0,
// ExitNotStored (Redis) or ExitUsage.
func ChatCommand(ctx context.Context, cmd string, store *chats.Store, bots []string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stderr, chatUsage)
		return exitStored
	}
	if len(args) != 2 || (cmd != "chat" && cmd != "unblock") {
		fmt.Fprintf(stderr, "producer %s: want BOT and CHAT, got %d arguments (see producer %s -h)\n", cmd, len(args), cmd)
		return ExitUsage
	}
	if !slices.Contains(bots, args[0]) {
		fmt.Fprintf(stderr, "producer %s: no bot %q: HERALD_BOTS lists %s\n", cmd, args[0], strings.Join(bots, ", "))
		return ExitUsage
	}
	bot, chat, err := chats.Normalize(args[0], args[1])
	if err != nil {
		fmt.Fprintf(stderr, "producer %s: %v\n", cmd, err)
		return ExitUsage
	}
	var out any
	if cmd == "chat" {
		out, err = store.Get(ctx, bot, chat)
	} else {
		var was bool
		was, err = store.Unblock(ctx, bot, chat, chats.SourceAPI)
		out = chats.Unblocked{State: chats.State{Bot: bot, Chat: chat}, WasBlocked: was}
	}
	if err != nil {
		if errors.Is(err, chats.ErrInvalid) {
			fmt.Fprintf(stderr, "producer %s: %v\n", cmd, err)
			return ExitUsage
		}
		fmt.Fprintf(stderr, "producer %s: %s\n", cmd, describeUnavailable(err))
		return ExitNotStored
	}
	_ = json.NewEncoder(stdout).Encode(out)
	return exitStored
}
