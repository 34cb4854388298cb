package oncall

import (
	"fmt"
	"regexp"
	"strings"
)

// User is a person who can be on call: a Telegram user, whom the bot can
// message directly once they have started it.
type User struct {
	// ID is the Telegram user id, a positive number. Two Users with the
	// same ID are the same person, whatever their names say.
	ID int64
	// Name is the display name used in messages ("Alice").
	Name string
	// Username is the Telegram @username without the @; it may be empty.
	Username string
}

// IsZero reports whether u is the zero User, which stands for nobody.
func (u User) IsZero() bool { return u.ID == 0 }

// String prints the name and, when there is one, the @username: "Alice
// (@alice)".
func (u User) String() string {
	if u.Username == "" {
		return u.Name
	}
	return fmt.Sprintf("%s (@%s)", u.Name, u.Username)
}

// usernamePattern is Telegram's syntax of usernames.
var usernamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{4,31}$`)

// Validate checks the user's fields; each error names the field and the
// fix.
func (u User) Validate() error {
	switch {
	case u.ID <= 0:
		return fmt.Errorf("id: %d is not a Telegram user id; write the user's numeric id, a positive number (the bot sees it in every message the user sends)", u.ID)
	case strings.TrimSpace(u.Name) == "":
		return fmt.Errorf("name: is empty; give the name messages should use, such as Alice")
	case u.Username != "" && !usernamePattern.MatchString(u.Username):
		return fmt.Errorf("username: %q is not a Telegram username; write 5 to 32 letters, digits or _, starting with a letter, with or without the @", u.Username)
	}
	return nil
}
