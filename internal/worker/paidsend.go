package worker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/redis/go-redis/v9"
)

// paidBots lists the bots whose paid broadcasts are on, sorted.
func (c Config) paidBots() []string {
	var out []string
	for _, name := range c.BotNames() {
		if c.paidOf(name).On {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// paidWatch follows, in one process, whether a bot's paid broadcasts are
// on, as the limiter's decisions say: it keeps herald_paid_on, and says
// once in the log when they go off or come back. The limiter turns them
// off for a budget spent and StopPaid for a refusal, fleet-wide; each
// process sees that in its next decision.
type paidWatch struct {
	configured bool

	mu sync.Mutex
	// state is 0 before the first decision, then 1 (on) or 2 (off), as of
	// the decision made at at (Redis' clock): an older decision that comes
	// late (a slot reserved ahead) does not turn it back.
	state    int
	at       time.Time
	lastStop time.Time // when this process last called StopPaid
	// explained says why paid broadcasts are off was read (a mark);
	// asked is when it was last looked for.
	explained bool
	asked     time.Time

	// tally adds up the charged sends since the last flush (flushCharged);
	// slots holds, with a budget, the reservation of each charged turn
	// about to be sent (notePaid), by task, for the flush to check.
	tmu   sync.Mutex
	tally chargedTally
	slots map[string]chargedTurn
}

// chargedTurn is the reservation of a charged turn and when it was noted.
type chargedTurn struct {
	resume string
	at     time.Time
}

// chargedTally is the charged sends of one bot that one process made and
// has not yet counted in Redis: how many, the tasks whose budget holds they
// end (with a budget), and how many of each broadcast.
type chargedTally struct {
	n           int64
	sends       []ratelimit.ChargedSend
	broadcasts  map[string]int64
	flushNeeded bool
}

// chargedFlushEvery is how often a process counts the charged sends it made
// in Redis, in one pipeline: at 1,000 sends a second that is one round
// trip per hundred sends instead of two commands for each, and the budget
// counts a send on its way as a hold until then.
const chargedFlushEvery = 100 * time.Millisecond

func newPaidWatch(configured bool) *paidWatch { return &paidWatch{configured: configured} }

// The states of a paidWatch.
const (
	paidUnknown = iota
	paidOn
	paidOff
)

// observe records a decision made at at with paid broadcasts on or off and
// reports whether that changed what the process knew (from was the state
// before).
func (w *paidWatch) observe(on bool, at time.Time) (changed bool, from int) {
	st := paidOff
	if on {
		st = paidOn
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if at.Before(w.at) || st == w.state {
		return false, w.state
	}
	from, w.state, w.at = w.state, st, at
	return true, from
}

// unexplained reports whether paid broadcasts are off with no reason read
// yet and it is time to look again (at most every chargedFlushEvery).
func (w *paidWatch) unexplained(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != paidOff || w.explained || now.Sub(w.asked) < chargedFlushEvery {
		return false
	}
	w.asked = now
	return true
}

// explain records whether the reason paid broadcasts are off was found.
func (w *paidWatch) explain(found bool) {
	w.mu.Lock()
	w.explained = found
	w.mu.Unlock()
}

// stopping records a StopPaid of this process and reports whether it is
// the first within a minute (the refusals of sends already on their way
// repeat it; only the first is logged and counted).
func (w *paidWatch) stopping(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state, w.at = paidOff, maxTime(w.at, now)
	if now.Sub(w.lastStop) < time.Minute {
		return false
	}
	w.lastStop = now
	return true
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// notePaid takes the paid broadcast of the turn a part is sent in: the
// part goes with allow_paid_broadcast when the slot was given under the
// paid limit and it is a send (an edit cannot carry the flag). A change of
// the bot's paid state is logged and shown in herald_paid_on; a turn asked
// for as unpaid (an edit's) does not tell it.
func (h *handler) notePaid(ctx context.Context, r *run, d *delivery, tn turn) {
	w := r.bot.paid
	edit := d.editing()
	d.paid, d.charged = tn.paid && !edit, tn.charged && !edit
	if d.charged && r.bot.limiter.Budgeted() {
		w.tmu.Lock()
		if w.slots == nil {
			w.slots = map[string]chargedTurn{}
		}
		w.slots[r.ID] = chargedTurn{resume: tn.resume, at: time.Now()}
		w.tmu.Unlock()
	}
	if !w.configured || tn.unpaid {
		return
	}
	changed, from := w.observe(tn.paid, tn.at)
	if !changed {
		if !tn.paid && w.unexplained(time.Now()) {
			// Off with no mark yet (the budget's rest held by sends on
			// their way): say why once the mark is there.
			h.paidOff(ctx, r)
		}
		return
	}
	on := 0.0
	if tn.paid {
		on = 1
	}
	h.metrics.PaidOn.WithLabelValues(r.bot.name).Set(on)
	switch {
	case tn.paid && from == paidOff:
		r.log.Info("paid broadcasts are on again; the bot sends at its paid limit")
	case !tn.paid:
		h.paidOff(ctx, r)
	}
}

// paidOff says why the bot's paid broadcasts are off, as the limiter
// records it (a budget spent was counted by the process whose count spent
// it, a refusal by the process that met it).
func (h *handler) paidOff(ctx context.Context, r *run) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	st, err := r.bot.limiter.PaidState(sctx)
	r.bot.paid.explain(err == nil && st.Reason != "")
	switch {
	case err != nil:
		r.log.Warn("paid broadcasts are off; the bot sends at its free limit (could not read why)", "error", err)
	case st.Reason == "":
		// No mark: the budget's rest is held by sends on their way; once
		// they are counted, what they did not spend is paid again.
		r.log.Debug("paid broadcasts wait for the charged sends on their way to be counted")
	case st.Reason == "budget":
		// Counted and said by the process whose count spent it.
		r.log.Info("paid broadcasts are off: the day's Stars budget is used up; the bot sends at its free limit until midnight UTC",
			"charged_today", st.ChargedToday, "stars_today", st.Stars(), "until", st.Until.UTC().Format(time.RFC3339))
	default:
		r.log.Info("paid broadcasts are off fleet-wide; the bot sends at its free limit", "reason", st.Reason,
			"until", st.Until.UTC().Format(time.RFC3339))
	}
}

// paidSent counts a part Telegram accepted as a paid broadcast: in the
// metrics at once, and, when charged, in the bot's count of the day and
// its broadcast's (keys.Space.BroadcastCharged) with the process's other
// charged sends of the next chargedFlushEvery (flushCharged).
func (h *handler) paidSent(_ context.Context, r *run, d *delivery) {
	if !d.paid {
		return
	}
	h.metrics.PaidSends.WithLabelValues(r.bot.name).Inc()
	if !d.charged {
		return
	}
	h.metrics.PaidCharged.WithLabelValues(r.bot.name).Inc()
	h.metrics.PaidStars.WithLabelValues(r.bot.name).Add(ratelimit.StarsPerCharged)
	h.metrics.TokenStars.WithLabelValues(d.msg.From).Add(ratelimit.StarsPerCharged)
	b, w := r.bot, r.bot.paid
	w.tmu.Lock()
	w.tally.n++
	if b.limiter.Budgeted() {
		w.tally.sends = append(w.tally.sends, ratelimit.ChargedSend{TaskID: r.ID, Resume: w.slots[r.ID].resume})
		delete(w.slots, r.ID)
	}
	if id, ok := keys.BroadcastOf(r.ID); ok {
		if w.tally.broadcasts == nil {
			w.tally.broadcasts = map[string]int64{}
		}
		w.tally.broadcasts[id]++
	}
	start := !w.tally.flushNeeded
	w.tally.flushNeeded = true
	w.tmu.Unlock()
	if start {
		time.AfterFunc(chargedFlushEvery, func() { h.flushCharged(b) })
	}
}

// flushCharged counts the charged sends b's tally holds in Redis, in one
// pipeline: the bot's count of the day (the budget's, with the holds the
// sends end) and each broadcast's own (keys.Space.BroadcastCharged), which
// its status reads as Stars. Telegram has those messages: they are counted
// whatever became of the tasks' contexts.
func (h *handler) flushCharged(b *bot) {
	w := b.paid
	w.tmu.Lock()
	t := w.tally
	w.tally = chargedTally{}
	for id, c := range w.slots {
		// A turn noted and never sent (refused, cancelled).
		if time.Since(c.at) > time.Minute {
			delete(w.slots, id)
		}
	}
	w.tmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var bc *ratelimit.BudgetCount
	_, err := h.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		bc = b.limiter.CountCharged(ctx, p, t.n, t.sends)
		for id, n := range t.broadcasts {
			key := b.keys.BroadcastCharged(id)
			p.IncrBy(ctx, key, n)
			p.Expire(ctx, key, h.ledger.Retention())
		}
		return nil
	})
	if err != nil {
		h.log.Warn("could not count charged sends in the bot's and their broadcasts' Stars", "bot", b.name, "sends", t.n, "error", err)
		return
	}
	if spent, _ := bc.Spent(); spent {
		// This count spent the budget, once fleet-wide: say so here.
		h.metrics.PaidFallbacks.WithLabelValues(b.name, "budget").Inc()
		h.metrics.PaidOn.WithLabelValues(b.name).Set(0)
		b.paid.explain(true)
		log := h.log
		if b.name != keys.DefaultBot {
			log = log.With("bot", b.name)
		}
		log.Warn("the day's Stars budget for paid broadcasts is spent; the bot sends at its free limit until midnight UTC",
			"budget_stars", b.limiter.Paid().Budget)
	}
}

// stopPaid carries out a refusal of a paid send (no Stars, paid broadcasts
// not enabled): the bot's paid broadcasts go off fleet-wide for
// PaidRetryAfter, and the part takes a new slot, at the free limit, in
// this attempt. Nothing was sent, so nothing is lost or retried later.
func (h *handler) stopPaid(ctx context.Context, r *run, d *delivery, a action) error {
	d.paidRefusals++
	now := time.Now()
	until := now.Add(PaidRetryAfter)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := r.bot.limiter.StopPaid(sctx, until, a.reason); err != nil {
		return h.finish(ctx, r, decide(storeError{err}, r.situation()))
	}
	h.metrics.PaidOn.WithLabelValues(r.bot.name).Set(0)
	if r.bot.paid.stopping(now) {
		h.metrics.PaidFallbacks.WithLabelValues(r.bot.name, a.reason).Inc()
		r.log.Warn("telegram refused a paid broadcast; the bot sends at its free limit fleet-wide for "+PaidRetryAfter.String()+", and the message goes at that limit",
			"reason", a.reason, "until", until.UTC().Format(time.RFC3339), "error", shown(a.err))
	}
	return nil
}
