package keys

import (
	"errors"
	"strconv"
	"strings"
)

// Telegram's rules for a public username (of a user, bot, group or
// channel; Telegram's FAQ and account.checkUsername): 5 to 32 characters,
// a-z, 0-9 and underscores, starting with a letter; case does not matter
// (NormChat). Collectible usernames bought on Fragment may be shorter;
// Herald does not accept those.
const (
	minUsername = 5
	maxUsername = 32
	// UsernameRule says the rules in messages that refuse a username.
	UsernameRule = "5-32 letters, digits or _, starting with a letter"
)

// ValidUsername reports whether name, without its @, follows Telegram's
// username rules: 5 to 32 ASCII letters, digits and underscores, starting
// with a letter.
func ValidUsername(name string) bool {
	if len(name) < minUsername || len(name) > maxUsername || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	return true
}

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// The errors of ParseChat, for callers to word in their own terms.
var (
	// ErrNoChat is an empty chat reference.
	ErrNoChat = errors.New("no chat")
	// ErrUsername is an @name that breaks Telegram's username rules.
	ErrUsername = errors.New("not a valid @username (" + UsernameRule + ")")
	// ErrChatID is a reference that is neither a non-zero integer nor an
	// @name.
	ErrChatID = errors.New("neither a numeric chat id nor an @username")
)

// ParseChat checks a chat reference, a non-zero integer chat id or an
// @username, and returns it in the form Herald stores and sends: the id
// in canonical decimal ("-100123", "+5" gives "5"), the @username as
// given. The caller trims spaces if it accepts them.
func ParseChat(chat string) (string, error) {
	if chat == "" {
		return "", ErrNoChat
	}
	if name, ok := strings.CutPrefix(chat, "@"); ok {
		if !ValidUsername(name) {
			return "", ErrUsername
		}
		return chat, nil
	}
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil || id == 0 {
		return "", ErrChatID
	}
	return strconv.FormatInt(id, 10), nil
}
