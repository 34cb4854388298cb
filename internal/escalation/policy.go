package escalation

import (
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// Policy is an escalation policy: who is told about an alert that nobody
// acknowledges, in which order, and how long each is given. A route of the
// routing file names one (escalation:).
type Policy struct {
	// Name names the policy in routes, metrics and messages.
	Name string
	// Steps are taken in order: each notifies its targets, then waits for
	// an acknowledgement.
	Steps []Step
	// Repeat is how many more times the steps are taken, from the first,
	// after the last one's wait ran out unacknowledged.
	Repeat int
	// RepeatInterval, when set, re-notifies the last step's targets about
	// a critical alert every interval once the steps (and their repeats)
	// are done, until it is acknowledged, resolved or silenced:
	// Alertmanager's repeat_interval, stopping on acknowledgement.
	RepeatInterval time.Duration
}

// Step notifies its targets, then waits for an acknowledgement.
type Step struct {
	Targets []Target
	// Wait is how long the step waits before the next one. A step whose
	// every notification fails (nobody on call, a user who never started
	// the bot) does not wait: the next step follows at once.
	Wait time.Duration
}

// Target is who a step notifies: a chat (Chat set), a user by direct
// message (User set), or whoever is on call in a schedule (Schedule set).
type Target struct {
	// Chat is a chat reference (keys.ParseChat's form) and Topic a forum
	// topic of it (0: none); Name is how messages call the chat ("" names
	// it by its reference).
	Chat  string
	Topic int
	Name  string
	// User is a Telegram user, messaged directly.
	User oncall.User
	// Schedule names the schedule whose person on call is messaged.
	Schedule string
}

// Target kinds, as targets are named in idempotency keys and logs.
const (
	kindChat   = "chat"
	kindUser   = "user"
	kindOnCall = "on_call"
)

// kind is the target's kind.
func (t Target) kind() string {
	switch {
	case t.Chat != "":
		return kindChat
	case t.Schedule != "":
		return kindOnCall
	}
	return kindUser
}

// label is how messages name the target before it is resolved.
func (t Target) label() string {
	switch t.kind() {
	case kindChat:
		if t.Name != "" {
			return t.Name
		}
		if t.Topic != 0 {
			return "chat " + t.Chat + " (topic " + strconv.Itoa(t.Topic) + ")"
		}
		return "chat " + t.Chat
	case kindOnCall:
		return "the person on call in " + t.Schedule
	}
	return userLabel(t.User)
}

// userLabel names a user in messages: "@bob" when they have a username
// (Telegram links it), else their name.
func userLabel(u oncall.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	return u.Name
}

// Catalog is what the engine reads from the routing file in force: the
// policies, by name. The file's loader builds it (see
// alerts.Table.Catalog); a reload swaps it. The schedules are the
// roster's (Config.Roster).
type Catalog struct {
	Policies map[string]Policy
}
