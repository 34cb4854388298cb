package roster

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// commandOnCall is the command a chat asks who is on call with.
const commandOnCall = "/oncall"

// notHere answers /oncall in a group no schedule announces in.
const notHere = "On-call is answered in the chats Herald's on-call schedules announce in (a schedule's chat: in the routing file), and to the people of the schedules in their private chats."

// Commands answers the bot commands of on-call in a chat: "/oncall" (the
// schedules announced in the chat, or all when none is), "/oncall NAME".
// A group or channel may ask when a schedule announces in it (its chat:);
// a private chat when it is someone's of a schedule (anyone may find the
// bot, or add it to a group, and the schedules name people).
// It reads the schedules the producers published (Snapshot) and the
// overrides in Redis, so a worker answers without the routing file.
type Commands struct {
	snap      *Snapshot
	overrides *Overrides
	now       func() time.Time
}

// NewCommands returns the commands on rdb.
func NewCommands(rdb redis.UniversalClient) *Commands {
	return &Commands{snap: NewSnapshot(rdb), overrides: NewOverrides(rdb), now: time.Now}
}

// Answer returns the reply to text, a message in chat; ok is false when
// text is no command of these.
func (c *Commands) Answer(ctx context.Context, chat, text string) (reply string, ok bool, err error) {
	args, ok := parseCommand(text, commandOnCall)
	if !ok {
		return "", false, nil
	}
	cat, err := c.snap.Catalog(ctx)
	if err != nil {
		return "", true, err
	}
	r := &Roster{Catalog: func() Catalog { return cat }, Overrides: c.overrides}
	names := r.Names()
	if len(names) == 0 {
		return "No on-call schedules are set up (schedules: in Herald's routing file).", true, nil
	}
	here := schedulesOf(cat, chat)
	if id, err := strconv.ParseInt(chat, 10, 64); err == nil && id > 0 {
		if !member(cat, id) {
			// A private chat: anyone may find the bot, and the schedules
			// name people.
			return "Only the people of Herald's on-call schedules may ask here.", true, nil
		}
	} else if len(here) == 0 {
		// A group or channel no schedule announces in: anyone may add the
		// bot to a group of theirs.
		return notHere, true, nil
	}
	pick := names
	if len(args) > 0 {
		if !slices.Contains(names, args[0]) {
			return "There is no schedule " + args[0] + ". Schedules: " + strings.Join(names, ", "), true, nil
		}
		pick = args[:1]
	} else if len(here) > 0 {
		pick = here
	}
	now := c.now()
	parts := make([]string, 0, len(pick))
	for _, n := range pick {
		st, _, err := r.Status(ctx, n, now)
		if err != nil {
			return "", true, err
		}
		parts = append(parts, describe(st))
	}
	return strings.Join(parts, "\n"), true, nil
}

// member reports whether the user id is someone of a schedule of c.
func member(c Catalog, id int64) bool {
	for _, s := range c.Schedules {
		for _, l := range s.Layers {
			for _, u := range l.Users {
				if u.ID == id {
					return true
				}
			}
		}
		for _, o := range s.Overrides {
			if o.User.ID == id {
				return true
			}
		}
	}
	return false
}

// schedulesOf are the schedules announced in chat, sorted.
func schedulesOf(c Catalog, chat string) []string {
	var out []string
	for n, s := range c.Schedules {
		if s.Chat != "" && keys.NormChat(s.Chat) == keys.NormChat(chat) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// parseCommand reads "/cmd", "/cmd@bot" and their arguments from text.
func parseCommand(text, cmd string) ([]string, bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil, false
	}
	head, _, _ := strings.Cut(fields[0], "@")
	if !strings.EqualFold(head, cmd) {
		return nil, false
	}
	return fields[1:], true
}
