package telegramfake

import (
	"math"
	"sort"
	"time"
)

// window is a compiled windowRule: a send is admitted once the accepted send n
// places before it is at least minAge old. minAge is real time: Per divided
// by the time scale, less the tolerance.
type window struct {
	n      int
	minAge time.Duration
}

// rule is a compiled limit. A rule without windows is off.
type rule struct {
	windows []window
	depth   int           // the largest n: how many send times a scope keeps
	span    time.Duration // the largest minAge: after it a quiet scope is fresh
}

// compileRule turns l into real-time windows under scale, allowing tol of
// each window early; extra(n) is how many sends a window of n admits.
func compileRule(l limit, scale, tol float64, extra func(int) int) rule {
	var r rule
	for _, w := range l {
		per := toReal(w.Per, scale)
		early := time.Duration(math.Round(float64(per) * tol))
		cw := window{n: extra(w.N), minAge: max(per-early, 1)}
		r.windows = append(r.windows, cw)
		r.depth = max(r.depth, cw.n)
		r.span = max(r.span, cw.minAge)
	}
	return r
}

func (r rule) off() bool { return len(r.windows) == 0 }

// readyAt is the earliest time every window of r admits another send to sc;
// the zero time when they admit one already.
func (r rule) readyAt(sc *scope) time.Time {
	var at time.Time
	for _, w := range r.windows {
		if t, ok := sc.nth(w.n); ok {
			if ready := t.Add(w.minAge); ready.After(at) {
				at = ready
			}
		}
	}
	return at
}

// scope is the flood-control state of one sender: the bot as a whole or
// one chat. It keeps the times of its recent accepted sends in order and
// the end of the flood wait announced by its last 429.
type scope struct {
	times     []time.Time // ascending: at least the last 2×depth accepted sends
	waitUntil time.Time   // end of the announced flood wait
}

// nth returns the time of the k-th most recent accepted send (k >= 1).
func (sc *scope) nth(k int) (time.Time, bool) {
	n := len(sc.times)
	if k > n {
		return time.Time{}, false
	}
	return sc.times[n-k], true
}

// push records an accepted send at t in its place among the times, which
// keep their order: a request the server got to after a later one is
// counted at its own arrival. It forgets all but the last 2×depth, so
// that a send counted among the recent ones still finds the depth before
// it.
func (sc *scope) push(t time.Time, depth int) {
	i := sc.place(t)
	sc.times = append(sc.times, time.Time{})
	copy(sc.times[i+1:], sc.times[i:])
	sc.times[i] = t
	if keep := 2 * depth; len(sc.times) > 2*keep {
		sc.times = append(sc.times[:0], sc.times[len(sc.times)-keep:]...)
	}
}

// place is where a send at t goes among the times: after every one not
// later than it.
func (sc *scope) place(t time.Time) int {
	return sort.Search(len(sc.times), func(i int) bool { return sc.times[i].After(t) })
}

// fits reports whether a send at t keeps every window of r with the sends
// already counted, wherever among them t falls: each run of N+1
// consecutive sends that t would join spans at least the window.
func (r rule) fits(sc *scope, t time.Time) bool {
	i := sc.place(t)
	at := func(k int) time.Time { // the times with t inserted at i
		switch {
		case k < i:
			return sc.times[k]
		case k == i:
			return t
		}
		return sc.times[k-1]
	}
	last := len(sc.times) // the highest index with t inserted
	for _, w := range r.windows {
		for j := max(i-w.n, 0); j <= i && j+w.n <= last; j++ {
			if at(j+w.n).Sub(at(j)) < w.minAge {
				return false
			}
		}
	}
	return true
}

// idle reports whether sc is indistinguishable from a fresh scope under r.
func (sc *scope) idle(r rule, now time.Time) bool {
	if now.Before(sc.waitUntil) {
		return false
	}
	last, ok := sc.nth(1)
	return !ok || !now.Before(last.Add(r.span))
}

// limitScope names the rule that refused a request.
type limitScope int

const (
	scopeNone limitScope = iota
	scopeBot
	scopeChat
)

// verdict is the limiter's answer to one sendMessage request.
type verdict struct {
	scope      limitScope // scopeNone: admitted, unless unpaid
	retryAfter int        // whole Telegram seconds announced in the 429
	inside     bool       // refused inside a flood wait announced earlier
	// charged: an admitted paid send beyond the free bot-wide limit, paid
	// for from the bot's wallet. unpaid: such a send the wallet could not
	// pay for, refused (scope stays scopeNone; nothing was recorded).
	charged, unpaid bool
}

// minSweep is the number of chat scopes below which idle ones are kept.
const minSweep = 4096

// limiter applies the bot-wide rule and the per-chat rules. It is not safe
// for concurrent use; the Server guards it with its mutex.
type limiter struct {
	bot, private, group rule
	// paid is the bot-wide rule of sends with allow_paid_broadcast, and
	// depth how many bot-wide send times both rules need.
	paid    rule
	depth   int
	penalty time.Duration
	scale   float64
	unit    time.Duration

	botScope  scope
	chats     map[int64]*scope
	sweepAt   int
	penalties int64
}

func newLimiter(cfg Config) *limiter {
	same := func(n int) int { return n }
	chatN, botN := same, same
	if cfg.Lenient {
		chatN = func(n int) int { return n + 1 }
		botN = func(n int) int { return 2 * n }
	}
	tol := cfg.tolerance()
	bot, paid := compileRule(cfg.Bot, cfg.TimeScale, tol, botN), compileRule(paidBotLimit, cfg.TimeScale, tol, botN)
	return &limiter{
		bot:     bot,
		paid:    paid,
		depth:   max(bot.depth, paid.depth),
		private: compileRule(cfg.Private, cfg.TimeScale, tol, chatN),
		group:   compileRule(cfg.Group, cfg.TimeScale, tol, chatN),
		penalty: toReal(cfg.Penalty, cfg.TimeScale),
		scale:   cfg.TimeScale,
		unit:    retryUnit(cfg.TimeScale),
		chats:   make(map[int64]*scope),
		sweepAt: minSweep,
	}
}

// chatRule is the rule for chatID: private for users, group for the rest.
func (l *limiter) chatRule(chatID int64) rule {
	if chatID > 0 {
		return l.private
	}
	return l.group
}

// waiting answers a sendMessage request to chatID (0 when the chat is not
// known) that arrives inside a flood wait already announced for the bot or
// for the chat: it is refused with the remaining retry_after, and each wait
// covering it is lengthened by the penalty. A request covered by both is
// charged to the bot and told the longer remainder. It returns a verdict
// with scopeNone when no wait covers the request.
func (l *limiter) waiting(now time.Time, chatID int64) verdict {
	var until time.Time
	v := verdict{inside: true}
	if now.Before(l.botScope.waitUntil) {
		l.extend(&l.botScope)
		until, v.scope = l.botScope.waitUntil, scopeBot
	}
	if sc := l.chats[chatID]; chatID != 0 && sc != nil && now.Before(sc.waitUntil) {
		l.extend(sc)
		if v.scope == scopeNone {
			v.scope = scopeChat
		}
		if sc.waitUntil.After(until) {
			until = sc.waitUntil
		}
	}
	if v.scope == scopeNone {
		return verdict{}
	}
	v.retryAfter = retryAfterSeconds(until.Sub(now), l.unit, l.scale)
	return v
}

// extend charges the penalty to a flood wait a request arrived inside.
func (l *limiter) extend(sc *scope) {
	if l.penalty > 0 {
		sc.waitUntil = sc.waitUntil.Add(l.penalty)
		l.penalties++
	}
}

// admit decides whether a message to chatID may be sent at now; w is the
// bot's wallet for a send with allow_paid_broadcast, nil for any other. A
// request inside an announced flood wait is refused by waiting. Otherwise
// the bot-wide windows are asked first, then the chat's; only when both
// agree (and a charged send is paid for) is the send recorded against
// either, so a refused request costs the sender nothing but the flood wait
// its 429 announces.
//
// Every accepted send counts in the bot's free windows (Config.Bot). A
// paid send is admitted when the paid windows (1000 per second) or the
// free ones admit it; it is charged when the free ones alone would not.
func (l *limiter) admit(now time.Time, chatID int64, w *wallet) verdict {
	if v := l.waiting(now, chatID); v.scope != scopeNone {
		return v
	}
	free := l.bot.fits(&l.botScope, now)
	paid := w != nil && !l.paid.off() && !l.bot.off() && l.paid.fits(&l.botScope, now)
	if !free && !paid {
		at := l.bot.readyAt(&l.botScope)
		if w != nil && !l.paid.off() {
			at = minTime(at, l.paid.readyAt(&l.botScope))
		}
		return l.announce(&l.botScope, scopeBot, now, at)
	}
	r := l.chatRule(chatID)
	var sc *scope
	if !r.off() {
		sc = l.chatScope(chatID, now)
		if !r.fits(sc, now) {
			return l.announce(sc, scopeChat, now, r.readyAt(sc))
		}
	}
	v := verdict{charged: w != nil && !free}
	if v.charged && !w.pay() {
		return verdict{unpaid: true}
	}
	if sc != nil {
		sc.push(now, r.depth)
	}
	if !l.bot.off() {
		l.botScope.push(now, l.depth)
	}
	return v
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// announce refuses a request because the windows of sc admit again only at
// readyAt, and starts the flood wait its 429 announces: retry_after is the
// wait in whole Telegram seconds, rounded up, and the flood wait lasts all
// of it, even when the windows would admit a little sooner.
func (l *limiter) announce(sc *scope, which limitScope, now, readyAt time.Time) verdict {
	secs := retryAfterSeconds(readyAt.Sub(now), l.unit, l.scale)
	sc.waitUntil = now.Add(toReal(time.Duration(secs)*time.Second, l.scale))
	return verdict{scope: which, retryAfter: secs}
}

// chatScope returns the scope of chatID, creating it if needed. When the map
// has grown, idle scopes are dropped first so that a run over many chats
// does not keep state for every chat it ever touched.
func (l *limiter) chatScope(chatID int64, now time.Time) *scope {
	if sc, ok := l.chats[chatID]; ok {
		return sc
	}
	if len(l.chats) >= l.sweepAt {
		for id, sc := range l.chats {
			if sc.idle(l.chatRule(id), now) {
				delete(l.chats, id)
			}
		}
		l.sweepAt = max(minSweep, 2*len(l.chats))
	}
	sc := &scope{}
	l.chats[chatID] = sc
	return sc
}
