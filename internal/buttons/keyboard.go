package buttons

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// Actions a button can carry.
const (
	// Ack records who acknowledged the alert and shows it on the message.
	Ack = "ack"
	// Silence1h and Silence24h create a silence of the alert's matchers
	// for an hour or a day.
	Silence1h  = "s1h"
	Silence24h = "s24h"
)

// Actions lists every action, in the order buttons show them.
var Actions = []string{Ack, Silence1h, Silence24h}

// Label is the text of an action's button.
func Label(action string) string {
	switch action {
	case Ack:
		return "✅ Acknowledge"
	case Silence1h:
		return "🔕 Silence 1h"
	case Silence24h:
		return "🔕 Silence 24h"
	}
	return action
}

// SilenceFor is how long a silence action lasts (0 for other actions).
func SilenceFor(action string) time.Duration {
	switch action {
	case Silence1h:
		return time.Hour
	case Silence24h:
		return 24 * time.Hour
	}
	return 0
}

// Matcher is one equality condition of a silence a press creates: the
// alert's value Name must equal Value (internal/silences matchers).
type Matcher struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Subject is what one message's buttons act on.
type Subject struct {
	// Bot and Chat name the message's bot and chat, as the message did.
	Bot  string `json:"bot,omitempty"`
	Chat string `json:"chat"`
	// ThreadKey is the alert's thread (jobs.Thread.Key): an
	// acknowledgement edits the thread's first message.
	ThreadKey string `json:"thread_key"`
	// Text and ParseMode are the message as sent; the outcome of a press is
	// shown below it.
	Text      string `json:"text"`
	ParseMode string `json:"parse_mode,omitempty"`
	// Alert names the alert in logs and silences' comments.
	Alert string `json:"alert,omitempty"`
	// Fired is when the alert fired: an acknowledgement says how long
	// after. Zero when unknown.
	Fired time.Time `json:"fired,omitzero"`
	// Matchers are the silence a silence button creates.
	Matchers []Matcher `json:"matchers,omitempty"`
	// Allowed are the users who may press: @usernames (any case) or
	// numeric user ids. Empty: anyone who sees the message.
	Allowed []string `json:"allowed,omitempty"`
	// Actions are the buttons shown, a subset of Actions in their order.
	Actions []string `json:"actions"`
	// Alertmanager, when set, is the URL of the Alertmanager the alert
	// came from (its route's alertmanager.url): an acknowledgement also
	// creates a silence of the alert's labels there, lasting
	// AlertmanagerSilence.
	Alertmanager        string        `json:"alertmanager,omitempty"`
	AlertmanagerSilence time.Duration `json:"alertmanager_silence,omitempty"`
}

// Allows reports whether the user with id and username (without '@') may
// press the subject's buttons.
func (s Subject) Allows(id int64, username string) bool {
	if len(s.Allowed) == 0 {
		return true
	}
	for _, a := range s.Allowed {
		if name, ok := strings.CutPrefix(a, "@"); ok {
			if username != "" && strings.EqualFold(name, username) {
				return true
			}
		} else if a == fmt.Sprint(id) {
			return true
		}
	}
	return false
}

// prefix starts the callback data of Herald's buttons (version 1).
const prefix = "h1:"

// Data is the callback data of the button for action on the subject ref.
func Data(action, ref string) string { return prefix + action + ":" + ref }

// ParseData reads callback data written by Data; ok is false for data of
// another kind.
func ParseData(data string) (action, ref string, ok bool) {
	rest, found := strings.CutPrefix(data, prefix)
	if !found {
		return "", "", false
	}
	action, ref, found = strings.Cut(rest, ":")
	if !found || ref == "" {
		return "", "", false
	}
	for _, a := range Actions {
		if a == action {
			return action, ref, true
		}
	}
	return "", "", false
}

// Keyboard stores s in Redis, in its bot's key space, for ttl and returns
// the buttons for its actions, one row. A nil keyboard is returned when s
// has no actions.
func Keyboard(ctx context.Context, rdb redis.Cmdable, s Subject, ttl time.Duration) (*jobs.Keyboard, error) {
	if len(s.Actions) == 0 {
		return nil, nil
	}
	for _, a := range s.Actions {
		if _, _, ok := ParseData(Data(a, "x")); !ok {
			return nil, fmt.Errorf("callbacks: unknown action %q", a)
		}
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	ref := hex.EncodeToString(b[:])
	body, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	key := keys.Bot(s.Bot).ButtonSubject(ref)
	if err := rdb.Set(ctx, key, body, ttl).Err(); err != nil {
		return nil, fmt.Errorf("callbacks: store subject: %w", err)
	}
	durable.Wrote(ctx, key)
	row := make([]jobs.Button, len(s.Actions))
	for i, a := range s.Actions {
		row[i] = jobs.Button{Text: Label(a), Data: Data(a, ref)}
	}
	return &jobs.Keyboard{row}, nil
}

// ErrUnknown is Load's error for a reference that is not (or no longer)
// stored.
var ErrUnknown = errors.New("callbacks: no such subject")

// Load reads the subject of ref in bot's key space.
func Load(ctx context.Context, rdb redis.Cmdable, bot, ref string) (Subject, error) {
	body, err := rdb.Get(ctx, keys.Bot(bot).ButtonSubject(ref)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return Subject{}, ErrUnknown
	case err != nil:
		return Subject{}, fmt.Errorf("callbacks: load subject: %w", err)
	}
	var s Subject
	if err := json.Unmarshal(body, &s); err != nil {
		return Subject{}, fmt.Errorf("callbacks: subject %s: %w", ref, err)
	}
	return s, nil
}
