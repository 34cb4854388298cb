package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Kind says what a caller does with a Decision.
type Kind int

const (
	// Go: the slot is owned; wait Decision.Wait, then send.
	Go Kind = 1
	// Again: wait Decision.Wait (short), then call Acquire again.
	Again Kind = 2
	// Defer: the wait is long; put the task back until Decision.Wait has
	// passed. Its reservation is kept in Redis.
	Defer Kind = 3
)

func (k Kind) String() string {
	switch k {
	case Go:
		return "go"
	case Again:
		return "again"
	case Defer:
		return "defer"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Decision is the limiter's answer for one message.
type Decision struct {
	Kind Kind
	Wait time.Duration
	// Progress is the task's progress record (keys.Sent), read in the same
	// round trip; "" when there is none.
	Progress string
}

// Limiter applies Config fleet-wide through Redis.
type Limiter struct {
	rdb redis.Scripter
	cfg Config
	// ReservationTTL bounds how long a deferred task's reservation is kept.
	resvTTL time.Duration
}

// New validates cfg (after defaults) and returns a Limiter.
func New(rdb redis.Scripter, cfg Config) (*Limiter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Limiter{rdb: rdb, cfg: cfg, resvTTL: 24 * time.Hour}, nil
}

// IsGroup reports whether chat is a group, supergroup or channel (negative id
// or @username), which Telegram limits per minute rather than per second.
func IsGroup(chat string) bool {
	return strings.HasPrefix(chat, "-") || strings.HasPrefix(chat, "@")
}

// ChatLimit returns the limit that applies to chat.
func (l *Limiter) ChatLimit(chat string) Limit {
	if IsGroup(chat) {
		return l.cfg.Group
	}
	return l.cfg.Private
}

func us(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// Acquire asks for a send slot for one message of task taskID to chat, from
// queue. It is idempotent per task: a deferred task that asks again gets the
// slot it reserved.
func (l *Limiter) Acquire(ctx context.Context, chat, queue, taskID string) (Decision, error) {
	q := l.cfg.Queues[queue]
	c := l.ChatLimit(chat)
	var p Limit
	if slices.Contains(l.cfg.PriorityQueues, queue) {
		p = l.cfg.Priority
	}
	// How late a reserved slot may still be used, and how much closer than
	// one interval a send may follow a late predecessor: a quarter of the
	// chat's interval at most, so two sends to a chat are never closer than
	// half an interval (Telegram, like the fake, tolerates a short burst).
	late := l.cfg.LateTolerance
	if c.Interval > 0 {
		late = min(late, c.Interval/4)
	}
	res, err := acquireScript.Run(ctx, l.rdb,
		[]string{keys.BotLimit(), keys.QueueLimit(queue), keys.ChatLimit(chat), keys.ChatSendLimit(chat), keys.Reservation(taskID), keys.Sent(taskID), keys.PriorityLimit()},
		us(l.cfg.Bot.Interval), us(l.cfg.Bot.tolerance()),
		us(q.Interval), us(q.tolerance()),
		us(c.Interval), us(c.tolerance()),
		us(l.cfg.SleepMax), us(late), l.resvTTL.Milliseconds(), us(late),
		us(p.Interval), us(p.tolerance()),
	).Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: acquire: %w", err)
	}
	return parseDecision(res)
}

func parseDecision(res []any) (Decision, error) {
	if len(res) < 2 {
		return Decision{}, fmt.Errorf("ratelimit: unexpected script reply %v", res)
	}
	var progress string
	if len(res) > 2 {
		progress, _ = res[2].(string)
	}
	kind, ok := res[0].(int64)
	if !ok {
		return Decision{}, fmt.Errorf("ratelimit: unexpected kind %T", res[0])
	}
	s, _ := res[1].(string)
	w, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: unexpected wait %q", s)
	}
	return Decision{Kind: Kind(kind), Wait: time.Duration(w) * time.Microsecond, Progress: progress}, nil
}

// Penalize records a 429 from Telegram for chat: the chat is paused fleet-wide
// for pause, and when FloodChats distinct chats were refused within
// FloodWindow the whole bot is paused too (global reports that).
func (l *Limiter) Penalize(ctx context.Context, chat string, pause time.Duration) (global bool, err error) {
	c := l.ChatLimit(chat)
	n, err := penalizeScript.Run(ctx, l.rdb,
		[]string{keys.ChatLimit(chat), keys.ChatSendLimit(chat), keys.BotLimit(), keys.Recent429()},
		us(pause), us(c.tolerance()), us(l.cfg.Bot.tolerance()), chat,
		us(l.cfg.FloodWindow), l.cfg.FloodChats,
	).Int()
	if err != nil {
		return false, fmt.Errorf("ratelimit: penalize: %w", err)
	}
	return n == 1, nil
}
