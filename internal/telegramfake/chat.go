package telegramfake

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Telegram chat types as they appear in the "type" field of a Chat.
const (
	chatPrivate    = "private"
	chatGroup      = "group"
	chatSupergroup = "supergroup"
	chatChannel    = "channel"
)

// channelIDBase is the magnitude Telegram puts in front of supergroup and
// channel ids, which is why they print as -100 followed by ten digits.
const channelIDBase = 1_000_000_000_000

// chatRef is a chat as a request names it: by id, or by @username.
type chatRef struct {
	id       int64
	username string // without the @; empty when named by id
}

// parseChatRef reads a chat_id parameter: a non-zero integer or @username.
func parseChatRef(v string) (chatRef, error) {
	v = strings.TrimSpace(v)
	if name, ok := strings.CutPrefix(v, "@"); ok {
		if !validUsername(name) {
			return chatRef{}, fmt.Errorf("chat %q: a username has 1 to 32 letters, digits or underscores after the @", v)
		}
		return chatRef{id: usernameChatID(name), username: name}, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id == 0 {
		return chatRef{}, fmt.Errorf("chat %q: use a non-zero integer id or @username", v)
	}
	return chatRef{id: id}, nil
}

func validUsername(name string) bool {
	if name == "" || len(name) > 32 {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// usernameChatID gives a @name chat a stable channel-style id. Usernames are
// case-insensitive on Telegram, so "@Alerts" and "@alerts" share one id.
func usernameChatID(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(name)))
	return -(channelIDBase + int64(h.Sum64()%10_000_000_000))
}

// chatKind picks the chat type of a numeric id: positive ids are users,
// ids written with a -100 prefix are supergroups and other negative ids are
// basic groups. Channels are known only by their @name.
func chatKind(id int64) string {
	switch {
	case id > 0:
		return chatPrivate
	case strings.HasPrefix(strconv.FormatInt(id, 10), "-100"):
		return chatSupergroup
	default:
		return chatGroup
	}
}

// chatJSON is Telegram's Chat object, fields in the order Telegram sends them.
type chatJSON struct {
	ID        int64  `json:"id"`
	Title     string `json:"title,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	Username  string `json:"username,omitempty"`
	Type      string `json:"type"`
}

// describeChat builds the Chat object for id; username is the channel's name
// when the chat is known by one.
func describeChat(id int64, username string) chatJSON {
	if username != "" {
		return chatJSON{ID: id, Title: username, Username: username, Type: chatChannel}
	}
	c := chatJSON{ID: id, Type: chatKind(id)}
	switch c.Type {
	case chatPrivate:
		c.FirstName = "User " + strconv.FormatInt(id, 10)
	case chatSupergroup:
		c.Title = "Supergroup " + strconv.FormatInt(id, 10)
	default:
		c.Title = "Group " + strconv.FormatInt(id, 10)
	}
	return c
}

// ChatBehavior makes one chat refuse messages the way Telegram does when the
// bot has lost access to it. When several fields are set, NotFound wins, then
// MigrateTo, then Kicked, then Blocked, then NeverStarted.
type ChatBehavior struct {
	// Blocked answers 403 "Forbidden: bot was blocked by the user".
	Blocked bool
	// NeverStarted answers 403 "Forbidden: bot can't initiate conversation
	// with a user": the private chat of a user who never started the bot,
	// which a bot cannot open. Nothing changes in the bot's membership
	// (there was none), so no my_chat_member update comes of it.
	NeverStarted bool
	// Kicked answers 403 "Forbidden: bot was kicked from the group chat"
	// (supergroup chat or channel chat for those types).
	Kicked bool
	// NotFound answers 400 "Bad Request: chat not found".
	NotFound bool
	// MigrateTo, when non-zero, answers 400 "Bad Request: group chat was
	// upgraded to a supergroup chat" with parameters.migrate_to_chat_id set
	// to it. Messages to the new id are delivered as usual.
	MigrateTo int64
}

// refusal returns the error a chat with behaviour b answers, or nil.
func (b ChatBehavior) refusal(chat chatJSON) *apiError {
	switch {
	case b.NotFound:
		return badRequest("chat not found")
	case b.MigrateTo != 0:
		e := badRequest("group chat was upgraded to a supergroup chat")
		e.params = &responseParameters{MigrateToChatID: b.MigrateTo}
		return e
	case b.Kicked:
		kind := chat.Type
		if kind == chatPrivate {
			kind = chatGroup
		}
		return forbidden("bot was kicked from the " + kind + " chat")
	case b.Blocked:
		return forbidden("bot was blocked by the user")
	case b.NeverStarted:
		return forbidden("bot can't initiate conversation with a user")
	}
	return nil
}

// SetChat sets how the chat named by chat ("123", "-100123" or "@name")
// answers from now on; the zero ChatBehavior restores normal delivery. A chat
// set by @name is matched however later requests name it. An unreadable chat
// is logged and ignored.
//
// When the change takes the bots out of the chat or back in (Blocked or
// Kicked set or cleared), every bot gets the my_chat_member update
// Telegram sends: in a private chat from the user, who blocked the bot
// (new status "kicked") or unblocked it ("member"); in a group from an
// administrator, who removed the bot ("left" from a basic group, "kicked"
// from a supergroup or channel) or added it back ("member", or
// "administrator" in a channel). A change between Blocked and Kicked, or
// to or from NotFound and MigrateTo, makes none.
func (s *Server) SetChat(chat string, b ChatBehavior) {
	ref, err := parseChatRef(chat)
	if err != nil {
		s.log.Error("telegramfake: SetChat ignored", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memberChangeLocked(describeChat(ref.id, s.rememberChatLocked(ref)), s.behaviors[ref.id], b)
	if b == (ChatBehavior{}) {
		delete(s.behaviors, ref.id)
		return
	}
	s.behaviors[ref.id] = b
}

// rememberChatLocked records the username of a chat named by @name so that
// later requests using its numeric id see the same channel, and returns the
// username known for the chat (empty for chats without one).
func (s *Server) rememberChatLocked(ref chatRef) string {
	if ref.username == "" {
		return s.usernames[ref.id]
	}
	if known, ok := s.usernames[ref.id]; ok {
		return known
	}
	s.usernames[ref.id] = ref.username
	return ref.username
}

// chatKey is how Stats.TooManyByChat names a chat: "@name" for chats known by
// a username (lower case), the decimal id otherwise.
func chatKey(id int64, username string) string {
	if username != "" {
		return "@" + strings.ToLower(username)
	}
	return strconv.FormatInt(id, 10)
}

// ChatKey returns the key under which Stats.TooManyByChat counts the chat
// named by chat ("123", "-100123" or "@name"), or an error naming the
// accepted forms.
func (s *Server) ChatKey(chat string) (string, error) {
	ref, err := parseChatRef(chat)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return chatKey(ref.id, s.rememberChatLocked(ref)), nil
}
