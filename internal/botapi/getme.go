package botapi

import (
	"hash/fnv"
)

// user is Telegram's User object describing the bot.
type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username"`
}

// botUser describes the bot named bot ("" for the default bot) as the
// producer knows it: by its name alone. The producer holds no bot token
// and does not call Telegram, so the id is not the bot's own: a number
// derived from the name, the same on every producer, in the range of bot
// ids (below 2^53, which JavaScript clients read exactly). The username is
// "herald_<name>_bot"; both stand for the bot only towards the tool.
func botUser(bot string) user {
	name := cmpBot(bot)
	h := fnv.New32a()
	_, _ = h.Write([]byte("herald/" + name))
	return user{ID: 1_000_000_000 + int64(h.Sum32()), IsBot: true, FirstName: "Herald " + name,
		Username: "herald_" + usernamePart(name) + "_bot"}
}

// usernamePart is a bot's name as a Telegram username may spell it:
// letters, digits and underscores.
func usernamePart(name string) string {
	out := []byte(name)
	for i, c := range out {
		if c == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}
