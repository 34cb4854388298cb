package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Paid lets a bot send above Telegram's free bot-wide limit with paid
// broadcasts (Bot API 7.11: allow_paid_broadcast, up to 1,000 messages a
// second, 0.1 Telegram Stars for each send beyond the free ones in a
// second). Chat and group limits do not change.
//
// A request that cannot carry allow_paid_broadcast (Ask.Unpaid: an edit)
// is held by Telegram to the free windows even while the paid ones are
// on, and every send counts in them, so at the paid rate they are always
// full. Such an ask gets a bot-wide slot where the free windows
// (Config.Bot) hold over the same bot log, up to a free span after the end
// of the paid schedule, with Decision.Paid false. No later slot goes before
// it (the log is append-only, or fit starts after it; a priority message
// neither takes nor moves it), so the free window around it stays as it
// was decided; the paid sends after it resume at the paid rate.
type Paid struct {
	// Limit paces the bot while paid broadcasts are on, e.g.
	// Per(1000, time.Second). Config.Bot paces it when they are off.
	Limit Limit
	// Free is how many sends in any FreePer Telegram does not charge for
	// (30).
	Free int
	// FreePer is the span Free counts over; 0 means a second (a test
	// running Telegram's time faster shortens it).
	FreePer time.Duration
	// Budget is the Stars a UTC day may spend; 0: no budget. Once the
	// day's charged sends have cost it, the bot falls back to Config.Bot
	// until midnight.
	Budget int
}

// PaidGuardFactor is how many times Config.Guard a bot with paid
// broadcasts keeps on its windows. Two sends N places apart in a window
// miss its span when the first reaches Telegram later, relative to its
// slot, than the second by more than the guard; at 1,000 sends a second a
// window holds 33 times as many such pairs as the free 30, and the
// machine runs that much busier, so the rare late send that the free
// windows' guard absorbs meets the paid window often. On this project's
// 2-core machine, a 20 ms guard let 1 to 5 429s through in each
// 8,000-send paid broadcast (docs/PAID.md).
const PaidGuardFactor = 2

// StarsPerCharged is what Telegram bills for one send beyond the free
// limit: 0.1 Stars. Budget counts are kept in charged sends.
const StarsPerCharged = 0.1

// WithPaid returns a copy of the limiter that paces the bot at p.Limit
// while its paid broadcasts are on (no PaidOff mark): Decision.Paid then
// says to send with allow_paid_broadcast, and Decision.Charged whether
// Telegram bills the send. An empty p.Limit turns paid broadcasts off.
func (l *Limiter) WithPaid(p Paid) *Limiter {
	c := *l
	c.paid = p
	c.paidBot = ""
	if len(p.Limit) > 0 {
		g := l.cfg.EffectiveGuard() * PaidGuardFactor
		c.paidBot = winArg(p.Limit, g) + spreadArg(p.Limit)
		// The free windows count the paid sends too (an edit, an unflagged
		// send, the fall-back once the budget is spent), and those arrive
		// with the paid rate's jitter: they keep the paid guard as well.
		c.bot = winArg(l.cfg.Bot, g) + spreadArg(l.cfg.Bot)
		c.cfg.SleepMax = p.sleepMax(l.cfg.SleepMax)
	}
	return &c
}

// sleepMax is the longest wait a handler of a bot with paid broadcasts
// sleeps through (Config.SleepMax, at least base): two spans of the paid
// limit's longest window. At 1,000 sends a second a fleet's handlers
// reserve the next second of the schedule within milliseconds, so a
// handler without a place to wait long (a waiter) would otherwise find its
// slot more than base ahead and go back to Redis and come again (about 20
// commands: asynq's retry, the promotion, the dequeue, a second decision),
// which at that rate is most messages of a backlog. Two spans cover the
// schedule the handlers ahead of it hold and its chat's spacing of a
// second behind an earlier message.
func (p Paid) sleepMax(base time.Duration) time.Duration {
	var longest time.Duration
	for _, w := range p.Limit {
		longest = max(longest, w.Per)
	}
	return max(base, 2*longest)
}

// Paid is the paid-broadcast configuration of the limiter (zero: none).
func (l *Limiter) Paid() Paid { return l.paid }

// freePer is FreePer, a second when unset.
func (p Paid) freePer() time.Duration {
	if p.FreePer <= 0 {
		return time.Second
	}
	return p.FreePer
}

// budgetSends is the day's budget in charged sends (0: none).
func (p Paid) budgetSends() int64 {
	if p.Budget <= 0 {
		return 0
	}
	return int64(float64(p.Budget)/StarsPerCharged + 0.5)
}

// holdGrace is how long after its slot a charged slot handed out still
// counts against a budget until its send is counted: a send leaves within
// half the guard of its slot and its worker counts it within a fraction of
// a second (Limiter.CountCharged), so a hold older than this is a send
// that never came (a 429, a cancel, a worker that died).
const holdGrace = 5 * time.Second

// ChargedSend is a charged paid send that went out: its task and its
// slot (Decision.Resume names it).
type ChargedSend struct {
	TaskID string
	Resume string
}

// countChargedScript counts charged sends made against a day's budget.
//
// KEYS[1] bot log, KEYS[2] the day's charged count, KEYS[3] the holds,
// KEYS[4] the paid-off mark.
// ARGV[1] free sends per span, ARGV[2] the span µs, ARGV[3] next UTC
// midnight ms, ARGV[4] the budget in charged sends, ARGV[5] how long (µs)
// the log keeps sends past their windows, then pairs of a task id and its
// slot µs.
// Returns {the sends counted as charged, 1 when this count reached the
// budget}: the mark then turns paid broadcasts off until midnight.
//
// Each send is checked again against the bot's log as it is now: a slot
// given up since its decision (its task woke too late and took another)
// is gone from the log, and Telegram never saw it, so a send that looked
// charged beside it may be free. Every task's hold ends.
var countChargedScript = redis.NewScript(`
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
local free, per, n = tonumber(ARGV[1]), tonumber(ARGV[2]), 0
for i = 6, #ARGV, 2 do
  local s = tonumber(ARGV[i + 1])
  -- The log keeps a budgeted bot's sends ARGV[5] µs past their windows;
  -- a send counted later than that may have lost its second's: charged.
  if s < now - tonumber(ARGV[5]) or
    redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', s - per), string.format('%.0f', s)) > free then n = n + 1 end
  redis.call('ZREM', KEYS[3], ARGV[i])
end
local reached = 0
if n > 0 then
  local total = redis.call('INCRBY', KEYS[2], n)
  redis.call('PEXPIREAT', KEYS[2], ARGV[3])
  if total >= tonumber(ARGV[4]) and total - n < tonumber(ARGV[4]) then
    redis.call('SET', KEYS[4], 'budget', 'PXAT', ARGV[3])
    reached = 1
  end
end
return {n, reached}
`)

// CountCharged queues on p the commands that count the charged sends made
// (n of them; PaidState.ChargedToday, as herald_paid_charged_sends_total
// counts them). With a budget, sends names them: each is checked again
// against the bot's log in one script run, which ends their holds, so the
// budget counts what Telegram bills. A worker calls it for the sends of a
// short while at once. With a budget, the returned BudgetCount says, once
// p has run, whether these sends spent it (nil without a budget).
func (l *Limiter) CountCharged(ctx context.Context, p redis.Pipeliner, n int64, sends []ChargedSend) *BudgetCount {
	if l.paid.budgetSends() > 0 {
		if len(sends) == 0 {
			return nil
		}
		args := []any{l.paid.Free, us(l.paid.freePer()), nextMidnight(time.Now()), l.paid.budgetSends(), us(holdGrace)}
		for _, c := range sends {
			args = append(args, c.TaskID, slotOf(c.Resume))
		}
		// Eval: a pipeline cannot fall back from EVALSHA to it.
		return &BudgetCount{cmd: countChargedScript.Eval(ctx, p, []string{l.ks.BotLog(), l.ks.PaidCharged(), l.ks.PaidHolds(), l.ks.PaidOff()}, args...)}
	}
	if n > 0 {
		p.IncrBy(ctx, l.ks.PaidCharged(), n)
		p.PExpireAt(ctx, l.ks.PaidCharged(), midnightAfter(time.Now()))
	}
	return nil
}

// BudgetCount is what CountCharged's count against a budget found.
type BudgetCount struct{ cmd *redis.Cmd }

// Spent reports whether this count reached the day's budget (it wrote the
// mark that turns paid broadcasts off), and how many of the sends it
// counted as charged.
func (b *BudgetCount) Spent() (spent bool, charged int64) {
	if b == nil {
		return false, 0
	}
	v, err := b.cmd.Slice()
	if err != nil || len(v) < 2 {
		return false, 0
	}
	n, _ := v[0].(int64)
	r, _ := v[1].(int64)
	return r == 1, n
}

// slotOf is the slot (µs) a reservation "<stage>|<slot>|<member>" names,
// "0" when there is none (the send then counts as free).
func slotOf(resume string) string {
	_, rest, ok := strings.Cut(resume, "|")
	slot, _, ok2 := strings.Cut(rest, "|")
	if !ok || !ok2 || slot == "" {
		return "0"
	}
	return slot
}

// Budgeted says the bot's paid broadcasts have a Stars budget: its
// charged sends' tasks are to be named to CountCharged.
func (l *Limiter) Budgeted() bool { return l.paid.budgetSends() > 0 }

// midnightAfter is the next UTC midnight after t.
func midnightAfter(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// nextMidnight is the next UTC midnight after t, in Unix milliseconds: the
// day's charged count and a budget's fallback end then.
func nextMidnight(t time.Time) string {
	return strconv.FormatInt(midnightAfter(t).UnixMilli(), 10)
}

// stopPaidScript turns a bot's paid broadcasts off.
//
// KEYS[1] bot log, KEYS[2] paid-off mark.
// ARGV[1] reason, ARGV[2] until (Unix ms).
// Returns the number of slots ahead that were forgotten.
//
// The slots reserved ahead were spaced for the paid limit; they are
// forgotten, and their tasks, finding them gone (Confirm, or the
// reservation's ZSCORE), take new ones at the free limit.
var stopPaidScript = redis.NewScript(`
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
redis.call('SET', KEYS[2], ARGV[1], 'PXAT', ARGV[2])
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
`)

// StopPaid turns the bot's paid broadcasts off fleet-wide until until
// (Telegram refused a paid send: no Stars balance, or paid broadcasts not
// enabled in @BotFather), recording reason. The slots reserved ahead at the
// paid rate are given up and taken again at the free limit, so nothing is
// sent above it while paid broadcasts are off.
func (l *Limiter) StopPaid(ctx context.Context, until time.Time, reason string) error {
	if reason == "" {
		reason = "stopped"
	}
	err := stopPaidScript.Run(ctx, l.rdb, []string{l.ks.BotLog(), l.ks.PaidOff()},
		reason, strconv.FormatInt(until.UnixMilli(), 10)).Err()
	if err != nil {
		return fmt.Errorf("ratelimit: stop paid broadcasts: %w", err)
	}
	return nil
}

// PaidState is what the bot's paid broadcasts are doing.
type PaidState struct {
	// Configured: the bot has a paid limit (WithPaid).
	Configured bool
	// On: configured and not stopped.
	On bool
	// Reason and Until say why and until when they are off ("budget" when
	// the day's Stars budget is spent).
	Reason string
	Until  time.Time
	// ChargedToday counts the sends Telegram bills since the last UTC
	// midnight; Stars() converts it.
	ChargedToday int64
}

// Stars is what the day's charged sends cost.
func (s PaidState) Stars() float64 { return float64(s.ChargedToday) * StarsPerCharged }

// PaidState reads the bot's paid-broadcast state in one round trip.
func (l *Limiter) PaidState(ctx context.Context) (PaidState, error) {
	var reason *redis.StringCmd
	var ttl *redis.DurationCmd
	var charged *redis.StringCmd
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		reason = p.Get(ctx, l.ks.PaidOff())
		ttl = p.PTTL(ctx, l.ks.PaidOff())
		charged = p.Get(ctx, l.ks.PaidCharged())
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return PaidState{}, fmt.Errorf("ratelimit: paid state: %w", err)
	}
	st := PaidState{Configured: l.paidBot != ""}
	st.ChargedToday, _ = charged.Int64()
	if r, err := reason.Result(); err == nil {
		st.Reason = r
		if d := ttl.Val(); d > 0 {
			st.Until = time.Now().Add(d)
		}
	}
	st.On = st.Configured && st.Reason == ""
	return st, nil
}
