package ratelimit

import (
	"context"
	"errors"
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
	// Go: the slot is owned; send when Decision.Wait has passed (0: now).
	// A Go with a wait comes only to an Ask with Ahead: after the wait the
	// caller sends if Confirm says the slot is still there and it woke no
	// later than half the guard; otherwise it asks again with Ask.Resume =
	// Decision.Resume.
	Go Kind = 1
	// Again: wait Decision.Wait (short), then call Acquire again.
	Again Kind = 2
	// Defer: the wait is long; put the task back until Decision.Wait has
	// passed. Its reservation is kept in Redis.
	Defer Kind = 3
	// Blocked: the chat blocked or removed the bot (keys.Space.Blocked):
	// do not send; no slot was taken.
	Blocked Kind = 4
	// Cancelled: the message was cancelled through the API
	// (keys.Space.Cancel): do not send; no slot was taken.
	Cancelled Kind = 5
)

func (k Kind) String() string {
	switch k {
	case Go:
		return "go"
	case Again:
		return "again"
	case Defer:
		return "defer"
	case Blocked:
		return "blocked"
	case Cancelled:
		return "cancelled"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Decision is the limiter's answer for one message.
type Decision struct {
	Kind Kind
	Wait time.Duration
	// Progress is the task's progress record (keys.Sent), read in the same
	// round trip when asked for; "" when there is none.
	Progress string
	// Slot names the slot a Go decision used; pass it to Penalize when
	// Telegram refuses the send.
	Slot string
	// At is when, by Redis' clock, a Go decision was made: the send time
	// that the limits were checked against is At plus Wait.
	At time.Time
	// Resume is the reservation of a decision with a wait that the caller
	// holds in memory (Ask.Ahead): an Again, or a Go whose slot Confirm no
	// longer finds. Ask again with it as Ask.Resume. A caller that hands the
	// task back to Redis instead stores it with Hold.
	Resume string
	// Paid: a Go given under the bot's paid limit (Limiter.WithPaid); send
	// it with allow_paid_broadcast.
	Paid bool
	// Charged: a paid Go beyond the free sends in the second up to its
	// slot, which Telegram bills (StarsPerCharged).
	Charged bool
	// grant is a Go's permission to send (Grant); only Acquire sets it.
	grant Grant
}

// slotMicros is the slot of a Go decision, in Redis microseconds.
func (d Decision) slotMicros() int64 { return d.At.UnixMicro() + d.Wait.Microseconds() }

// Limiter applies Config fleet-wide through Redis.
type Limiter struct {
	rdb redis.UniversalClient
	cfg Config
	// resvTTL bounds how long a deferred task's reservation is kept.
	resvTTL time.Duration
	// Windows as the scripts read them.
	bot, private, group, priority string
	queues                        map[string]string
	// ks is the key space of the bot whose sends the limiter paces.
	ks   keys.Space
	name string
	// paid and paidBot (its windows as the scripts read them, "" for
	// none) are the bot's paid broadcasts (WithPaid).
	paid    Paid
	paidBot string
}

// ForBot returns a limiter with the same configuration that paces the bot
// named name: every bot has its own logs, pauses and reservations, in its
// own Redis Cluster slot, as Telegram's limits are per bot.
func (l *Limiter) ForBot(name string) *Limiter {
	c := *l
	c.ks, c.name = keys.Bot(name), name
	return &c
}

// Bot is the name of the bot the limiter paces ("" for the default bot).
func (l *Limiter) Bot() string { return l.name }

// New validates cfg (after defaults) and returns a Limiter.
func New(rdb redis.UniversalClient, cfg Config) (*Limiter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	g := cfg.EffectiveGuard()
	l := &Limiter{rdb: rdb, cfg: cfg, resvTTL: 24 * time.Hour,
		bot: winArg(cfg.Bot, g) + spreadArg(cfg.Bot), private: winArg(cfg.Private, g), group: winArg(cfg.Group, g),
		priority: winArg(cfg.Priority, 0), queues: map[string]string{}}
	for q, lim := range cfg.Queues {
		l.queues[q] = winArg(lim, g)
	}
	return l, nil
}

// spreadArg adds, for each bot-wide window of N sends per span, a spacing
// of span/N between consecutive sends (no guard), so that a window's N
// sends do not all leave at the same instant: when a 429 comes back, almost
// no other request is on its way. The window's count still binds alone, so
// the rate over any span is unchanged.
func spreadArg(lim Limit) string {
	var b strings.Builder
	for _, w := range lim {
		if w.N > 1 {
			b.WriteString(";1:" + strconv.FormatInt((w.Per/time.Duration(w.N)).Microseconds(), 10) + ":0")
		}
	}
	return b.String()
}

// Config returns the limiter's configuration, defaults applied.
func (l *Limiter) Config() Config { return l.cfg }

// winArg writes a Limit as the scripts read it: "n:span:guard;...", in µs.
func winArg(lim Limit, guard time.Duration) string {
	var b strings.Builder
	for i, w := range lim {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(strconv.Itoa(w.N) + ":" + strconv.FormatInt(w.Per.Microseconds(), 10) + ":" + strconv.FormatInt(guard.Microseconds(), 10))
	}
	return b.String()
}

// IsGroup reports whether chat is a group, supergroup or channel (negative id
// or @username), which Telegram limits per minute as well as per second.
func IsGroup(chat string) bool {
	return strings.HasPrefix(chat, "-") || strings.HasPrefix(chat, "@")
}

// chatLimit is the limit of chat's kind.
func (l *Limiter) chatLimit(chat string) Limit {
	if IsGroup(chat) {
		return l.cfg.Group
	}
	return l.cfg.Private
}

func (l *Limiter) chatArg(chat string) string {
	if IsGroup(chat) {
		return l.group
	}
	return l.private
}

func us(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// Ask is one request for a send slot.
type Ask struct {
	// Chat, Queue and TaskID name the message: a task may ask any number
	// of times and gets the slot or turn it reserved.
	Chat, Queue, TaskID string
	// Progress reads the task's progress record in the same round trip
	// (Decision.Progress).
	Progress bool
	// SleepMax overrides Config.SleepMax for this ask: the longest wait the
	// caller will sleep through rather than defer the task. Zero: the
	// config's.
	SleepMax time.Duration
	// Ahead lets Acquire answer Go with a wait up to SleepMax (the caller
	// sleeps through it, then calls Confirm and sends) and leave the
	// reservation of an Again in the caller's memory (Decision.Resume)
	// rather than in Redis. Without it, every wait ends in another Acquire
	// and reservations are stored.
	Ahead bool
	// Resume is Decision.Resume of an earlier Go with a wait that the
	// caller could not use (Confirm said the slot moved, or it woke too
	// late).
	Resume string
	// Unpaid says the message cannot be sent with allow_paid_broadcast
	// (editMessageText and editMessageCaption do not take it): while paid
	// broadcasts are on its bot-wide slot is still where the bot's free
	// windows (Config.Bot) hold, and its Decision.Paid is false.
	Unpaid bool
}

// Acquire asks for a send slot for one message.
func (l *Limiter) Acquire(ctx context.Context, a Ask) (Decision, error) {
	var prio string
	if slices.Contains(l.cfg.PriorityQueues, a.Queue) {
		prio = l.priority
	}
	lane := "0"
	if slices.Contains(l.cfg.Lanes, a.Queue) {
		lane = "1"
	}
	withProgress, unpaid := "0", "0"
	if a.Progress {
		withProgress = "1"
	}
	if a.Unpaid {
		unpaid = "1"
	}
	sleepMax := l.cfg.SleepMax
	if a.SleepMax > 0 {
		sleepMax = a.SleepMax
	}
	// A slot ahead is handed out as "send after a wait" only to callers
	// that confirm it.
	var goAhead time.Duration
	if a.Ahead {
		goAhead = sleepMax
	}
	chat := a.Chat
	res, err := acquireScript.Run(ctx, l.rdb,
		[]string{l.ks.BotLog(), l.ks.QueueLog(a.Queue), l.ks.ChatTurns(chat), l.ks.ChatSends(chat),
			l.ks.Reservation(a.TaskID), l.ks.Sent(a.TaskID), l.ks.PriorityLog(), l.ks.BotPause(), l.ks.ChatPause(chat),
			l.ks.Blocked(chat), l.ks.Cancel(a.TaskID), l.ks.PaidOff(), l.ks.PaidCharged(), l.ks.PaidHolds()},
		l.bot, l.queues[a.Queue], l.chatArg(chat), prio,
		us(l.cfg.EffectiveGuard()), us(sleepMax), us(l.cfg.SleepMax/2), l.resvTTL.Milliseconds(),
		a.TaskID, keys.NormChat(chat), l.ks.ChatSendsPrefix(), l.private, l.group, withProgress, l.ks.ReservationPrefix(),
		a.Resume, us(goAhead), l.paidBot, l.paid.Free, l.paid.budgetSends(), nextMidnight(time.Now()), us(l.paid.freePer()), lane, unpaid, us(holdGrace),
	).Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: acquire: %w", err)
	}
	d, err := parseDecision(res)
	if err == nil && d.Kind == Go {
		d.grant = Grant{slot: d.Slot, ok: true, paid: d.Paid, unpaid: a.Unpaid}
	}
	return d, err
}

// Confirm tells whether the slot of a Go with a wait is still the
// message's, and whether the message may still go: Go when it may, Again
// when the slot moved (a 429 pause since the decision shifts the schedule,
// a priority message may take the slot), Blocked when the chat blocked the
// bot meanwhile, Cancelled when the message was cancelled. One round trip:
// a ZSCORE on the log that holds the slot and an MGET of the two marks.
func (l *Limiter) Confirm(ctx context.Context, chat, taskID string, d Decision) (Kind, error) {
	var key string
	switch {
	case len(l.cfg.Bot) > 0:
		key = l.ks.BotLog()
	case len(l.chatLimit(chat)) > 0:
		key = l.ks.ChatSends(chat)
	}
	var score *redis.FloatCmd
	var marks *redis.SliceCmd
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if key != "" {
			score = p.ZScore(ctx, key, d.Slot)
		}
		marks = p.MGet(ctx, l.ks.Blocked(chat), l.ks.Cancel(taskID))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("ratelimit: confirm: %w", err)
	}
	m := marks.Val()
	switch {
	case len(m) == 2 && m[0] != nil:
		return Blocked, nil
	case len(m) == 2 && m[1] != nil:
		return Cancelled, nil
	case key == "":
		return Go, nil
	}
	v, err := score.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Again, nil
	case err != nil:
		return 0, fmt.Errorf("ratelimit: confirm: %w", err)
	case int64(v) == d.slotMicros():
		return Go, nil
	}
	return Again, nil
}

// Hold stores a reservation that a task held in memory (Decision.Resume)
// before the task goes back to Redis, so that whoever takes it next keeps
// its slot.
func (l *Limiter) Hold(ctx context.Context, taskID, resume string) error {
	if resume == "" {
		return nil
	}
	return l.rdb.Set(ctx, l.ks.Reservation(taskID), resume, l.resvTTL).Err()
}

func parseDecision(res []any) (Decision, error) {
	if len(res) < 2 {
		return Decision{}, fmt.Errorf("ratelimit: unexpected script reply %v", res)
	}
	var d Decision
	if len(res) > 2 {
		d.Progress, _ = res[2].(string)
	}
	if len(res) > 3 {
		d.Slot, _ = res[3].(string)
	}
	if len(res) > 4 {
		at, err := micros(res[4])
		if err != nil {
			return Decision{}, err
		}
		d.At = time.UnixMicro(at.Microseconds())
	}
	if len(res) > 5 {
		d.Resume, _ = res[5].(string)
	}
	if len(res) > 7 {
		p, _ := res[6].(int64)
		c, _ := res[7].(int64)
		d.Paid, d.Charged = p == 1, c == 1
	}
	kind, ok := res[0].(int64)
	if !ok {
		return Decision{}, fmt.Errorf("ratelimit: unexpected kind %T", res[0])
	}
	d.Kind = Kind(kind)
	w, err := micros(res[1])
	if err != nil {
		return Decision{}, err
	}
	d.Wait = w
	return d, nil
}

func micros(v any) (time.Duration, error) {
	s, _ := v.(string)
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: unexpected duration %q", s)
	}
	return time.Duration(n) * time.Microsecond, nil
}

// pause is what Penalize did.
type pause struct {
	// Bot is how long the whole bot is paused from now (0: not paused).
	Bot time.Duration
	// Chat is how long the chat is paused from now.
	Chat time.Duration
	// Shift is how far the bot-wide schedule moved back to clear the pause.
	Shift time.Duration
	// Requeued counts the chat's messages (the refused one first) given new
	// turns after the pause.
	Requeued int
}

// Scope names the widest thing paused: "bot" or "chat".
func (p pause) Scope() string {
	if p.Bot > 0 {
		return "bot"
	}
	return "chat"
}

// Penalize records a 429 from Telegram for a send to chat that used slot (a
// Go decision's Slot, "" if unknown). Telegram's answer does not say whether
// the chat or the whole bot is flooded, so the chat is paused for
// retryAfter and the whole bot for min(retryAfter, Config.BotPauseMax):
// every slot reserved inside a pause moves behind it, keeping its order,
// and the refused message is the chat's next one after the pause. A 429
// that comes during a pause extends it. retryAfter should already include
// any jitter the caller wants.
func (l *Limiter) Penalize(ctx context.Context, chat, slot string, retryAfter time.Duration) (pause, error) {
	bot := min(retryAfter, l.cfg.BotPauseMax)
	if l.cfg.BotPauseMax < 0 {
		bot = 0
	}
	res, err := penalizeScript.Run(ctx, l.rdb,
		[]string{l.ks.BotLog(), l.ks.BotPause(), l.ks.ChatPause(chat), l.ks.ChatSends(chat), l.ks.ChatTurns(chat)},
		us(retryAfter), us(bot), slot, l.ks.ChatSendsPrefix(), l.chatArg(chat), us(l.cfg.EffectiveGuard()),
		l.resvTTL.Milliseconds(), l.ks.ReservationPrefix(), l.bot,
	).Slice()
	if err != nil {
		return pause{}, fmt.Errorf("ratelimit: penalize: %w", err)
	}
	if len(res) < 5 {
		return pause{}, fmt.Errorf("ratelimit: unexpected script reply %v", res)
	}
	var p pause
	paused, _ := res[0].(int64)
	left, err := micros(res[1])
	if err != nil {
		return pause{}, err
	}
	if paused == 1 {
		p.Bot = left
	}
	if p.Chat, err = micros(res[2]); err != nil {
		return pause{}, err
	}
	if p.Shift, err = micros(res[3]); err != nil {
		return pause{}, err
	}
	n, _ := res[4].(int64)
	p.Requeued = int(n)
	return p, nil
}
