package chats

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/keys"
)

// Why a chat is blocked (Block.Reason).
const (
	// ReasonBlocked: a user blocked the bot in a private chat.
	ReasonBlocked = "blocked"
	// ReasonKicked: the bot was removed (banned) from a group, supergroup
	// or channel.
	ReasonKicked = "kicked"
	// ReasonLeft: the bot is no longer a member of the chat (removed from a
	// basic group, or it left).
	ReasonLeft = "left"
)

// What told Herald (Block.Source, and the source label of the metrics).
const (
	// SourceTelegram403: Telegram answered a send with 403.
	SourceTelegram403 = "telegram_403"
	// SourceMyChatMember: a my_chat_member update.
	SourceMyChatMember = "my_chat_member"
	// SourceAPI: Herald's API (or CLI), on an operator's word.
	SourceAPI = "api"
)

// sources are the accepted sources: each is a metric label value.
var sources = []string{SourceTelegram403, SourceMyChatMember, SourceAPI}

// maxReason and maxError bound what a mark stores.
const (
	maxReason = 64
	maxError  = 512
)

// Block is why and since when a chat is blocked: the JSON value of its
// mark (keys.Space.Blocked).
type Block struct {
	// Since is when the chat blocked the bot (the update's date, or when
	// the 403 came); the zero time means now.
	Since time.Time `json:"since"`
	// Reason is ReasonBlocked, ReasonKicked or ReasonLeft (or another
	// short word for what Telegram said).
	Reason string `json:"reason"`
	// Source is SourceTelegram403, SourceMyChatMember or SourceAPI.
	Source string `json:"source"`
	// Error is Telegram's error text, when a send was refused.
	Error string `json:"error,omitempty"`
}

// check reports the first field of b that cannot be stored.
func (b Block) check() error {
	switch {
	case strings.TrimSpace(b.Reason) == "" || len(b.Reason) > maxReason:
		return &InvalidError{Field: "reason", Message: fmt.Sprintf("give why the chat is blocked (%q, %q or %q), at most %d bytes",
			ReasonBlocked, ReasonKicked, ReasonLeft, maxReason)}
	case !validSource(b.Source):
		return &InvalidError{Field: "source", Message: fmt.Sprintf("%q is not a source; use one of %s", b.Source, strings.Join(sources, ", "))}
	}
	return nil
}

func validSource(s string) bool {
	for _, v := range sources {
		if s == v {
			return true
		}
	}
	return false
}

// encode is b as its mark stores it: Since in UTC, Error cut to maxError
// bytes (on a rune boundary).
func (b Block) encode(now time.Time) (string, error) {
	if b.Since.IsZero() {
		b.Since = now
	}
	b.Since = b.Since.UTC()
	if len(b.Error) > maxError {
		cut := maxError
		for cut > 0 && !utf8Start(b.Error[cut]) {
			cut--
		}
		b.Error = b.Error[:cut]
	}
	v, err := json.Marshal(b)
	return string(v), err
}

// utf8Start reports whether c starts a UTF-8 sequence.
func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

// State is what Herald knows of a chat for a bot: the JSON of GET
// /v1/chats/{bot}/{chat}.
type State struct {
	Bot     string `json:"bot"`
	Chat    string `json:"chat"`
	Blocked bool   `json:"blocked"`
	// Since, Reason, Source and Error are the Block's, when blocked.
	Since  *time.Time `json:"since,omitempty"`
	Reason string     `json:"reason,omitempty"`
	Source string     `json:"source,omitempty"`
	Error  string     `json:"error,omitempty"`
}

// reasonUnknown is the reason shown for a mark whose value does not read
// as a Block: the chat is blocked all the same (the send path tests that
// the key exists).
const reasonUnknown = "unknown"

// stateOf is the State of a mark with value v.
func stateOf(bot, chat, v string) State {
	st := State{Bot: bot, Chat: chat, Blocked: true}
	var b Block
	if err := json.Unmarshal([]byte(v), &b); err != nil || b.Reason == "" {
		st.Reason = reasonUnknown
		return st
	}
	since := b.Since.UTC()
	st.Since, st.Reason, st.Source, st.Error = &since, b.Reason, b.Source, b.Error
	return st
}

// InvalidError is input the store refuses, naming the field and the fix.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return "chats: " + e.Field + ": " + e.Message }

// ErrInvalid matches every InvalidError (errors.Is).
var ErrInvalid = errors.New("chats: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Normalize checks a bot name and a chat reference and returns them as
// the store keys them: "" is the default bot, and the chat as
// keys.ParseChat has it. Its error is an *InvalidError naming "bot" or
// "chat".
func Normalize(bot, chat string) (string, string, error) {
	if bot == "" {
		bot = keys.DefaultBot
	}
	if !keys.ValidBotName(bot) {
		return "", "", &InvalidError{Field: "bot", Message: fmt.Sprintf("%q is not a bot name (1-%d of a-z, 0-9, _ and -, starting with a letter)", bot, keys.MaxBotName)}
	}
	c, err := keys.ParseChat(chat)
	if err != nil {
		return "", "", &InvalidError{Field: "chat", Message: fmt.Sprintf("%q: %v", chat, err)}
	}
	return bot, c, nil
}
