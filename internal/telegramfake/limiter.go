package telegramfake

import "time"

// gcra is one flood-control rule as a generic cell rate algorithm: every
// admitted event moves the theoretical arrival time (TAT) one interval
// later, and an event is admitted while the TAT is at most tolerance ahead of
// now. A tolerance of (Burst-1) intervals lets Burst events through at once.
// All spans are real time, already divided by the time scale.
type gcra struct {
	off       bool
	interval  time.Duration
	tolerance time.Duration
}

func newGCRA(l Limit, scale float64) gcra {
	if l.Off() {
		return gcra{off: true}
	}
	interval := time.Duration(float64(l.Per) / l.Rate / scale)
	if interval < 1 {
		interval = 1
	}
	return gcra{interval: interval, tolerance: time.Duration(l.Burst-1) * interval}
}

// take records one admitted event.
func (g gcra) take(b *bucket, now time.Time) {
	if g.off {
		return
	}
	start := b.tat
	if start.Before(now) {
		start = now
	}
	b.tat = start.Add(g.interval)
}

// bucket is the state one rule keeps for one sender.
type bucket struct {
	tat         time.Time // theoretical arrival time of the next event
	lockedUntil time.Time // when the lockout announced by the last 429 ends
}

// idle reports whether the bucket is indistinguishable from a fresh one.
func (b *bucket) idle(now time.Time) bool {
	return !b.tat.After(now) && !b.lockedUntil.After(now)
}

// limitScope names the rule that refused a request.
type limitScope int

const (
	scopeNone limitScope = iota
	scopeBot
	scopeChat
)

// minSweep is the number of chat buckets below which idle ones are kept.
const minSweep = 4096

// limiter applies the bot-wide rule and the per-chat rules. It is not safe
// for concurrent use; the Server guards it with its mutex.
type limiter struct {
	bot, private, group gcra
	penalty             time.Duration

	botBucket bucket
	chats     map[int64]*bucket
	sweepAt   int
	penalties int64
}

func newLimiter(cfg Config) *limiter {
	return &limiter{
		bot:     newGCRA(cfg.Bot, cfg.TimeScale),
		private: newGCRA(cfg.Private, cfg.TimeScale),
		group:   newGCRA(cfg.Group, cfg.TimeScale),
		penalty: toReal(cfg.Penalty, cfg.TimeScale),
		chats:   make(map[int64]*bucket),
		sweepAt: minSweep,
	}
}

// admit decides whether a message to chatID may be sent at now. The bot-wide
// rule is asked first, then the chat's own rule; only when both agree is the
// event counted against either, so a refused request costs nothing except a
// possible penalty. On refusal it returns the rule that refused and how long
// the sender has to wait.
func (l *limiter) admit(now time.Time, chatID int64) (limitScope, time.Duration) {
	if wait, refused := l.refuse(l.bot, &l.botBucket, now); refused {
		return scopeBot, wait
	}
	rule := l.group
	if chatID > 0 {
		rule = l.private
	}
	var b *bucket
	if !rule.off {
		b = l.chatBucket(chatID, now)
		if wait, refused := l.refuse(rule, b, now); refused {
			return scopeChat, wait
		}
		rule.take(b, now)
	}
	l.bot.take(&l.botBucket, now)
	return scopeNone, 0
}

// refuse reports how long the sender of b must wait, or false when it may
// send now. A refusal starts a lockout lasting until the rule would admit the
// sender; a request that arrives during a lockout extends it by the penalty.
func (l *limiter) refuse(rule gcra, b *bucket, now time.Time) (time.Duration, bool) {
	if rule.off {
		return 0, false
	}
	if now.Before(b.lockedUntil) {
		if l.penalty > 0 {
			b.lockedUntil = b.lockedUntil.Add(l.penalty)
			l.penalties++
		}
		return b.lockedUntil.Sub(now), true
	}
	if allowAt := b.tat.Add(-rule.tolerance); now.Before(allowAt) {
		b.lockedUntil = allowAt
		return allowAt.Sub(now), true
	}
	return 0, false
}

// chatBucket returns the bucket of chatID, creating it if needed. When the map
// has grown, idle buckets are dropped first so that a run over many chats
// does not keep state for every chat it ever touched.
func (l *limiter) chatBucket(chatID int64, now time.Time) *bucket {
	if b, ok := l.chats[chatID]; ok {
		return b
	}
	if len(l.chats) >= l.sweepAt {
		for id, b := range l.chats {
			if b.idle(now) {
				delete(l.chats, id)
			}
		}
		l.sweepAt = max(minSweep, 2*len(l.chats))
	}
	b := &bucket{}
	l.chats[chatID] = b
	return b
}
