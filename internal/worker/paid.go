package worker

import (
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// PaidBroadcast is one bot's paid broadcasts (Bot API 7.11): its messages
// go with allow_paid_broadcast, paced fleet-wide by Limit instead of the
// free bot-wide limit (ratelimit.Config.Bot), and Telegram bills 0.1 Stars
// for each send beyond the free 30 in a second. Chat and group limits do
// not change. Paid broadcasts must be enabled for the bot in @BotFather
// and need a Stars balance: when Telegram refuses a paid send for either,
// the bot falls back to its free limit fleet-wide for PaidRetryAfter and
// the message goes again at that limit.
type PaidBroadcast struct {
	// On turns paid broadcasts on for the bot.
	On bool
	// Limit is the bot-wide limit while they are on; nil means
	// DefaultPaidLimit. Telegram allows at most 1,000 sends a second (a
	// second of retry_after, Config.RetryAfterUnit, for a fake that runs
	// Telegram's clock faster).
	Limit ratelimit.Limit
	// Budget is the Stars a UTC day may spend on charged sends; once it is
	// spent, the bot sends at its free limit until midnight UTC. 0: no
	// budget.
	Budget int
}

// DefaultPaidLimit is Telegram's cap for paid broadcasts, 1,000 sends a
// second, and PaidLimit's default.
var DefaultPaidLimit = ratelimit.Per(paidCap, time.Second)

// paidCap is the most sends a second Telegram allows with paid broadcasts.
const paidCap = 1000

// telegramFreeSends is how many sends in a second Telegram does not charge
// for: the free bot-wide limit.
const telegramFreeSends = 30

// PaidRetryAfter is how long a bot sends at its free limit after Telegram
// refused a paid send (no Stars, or paid broadcasts not enabled): an hour,
// after which paid broadcasts are tried again.
const PaidRetryAfter = time.Hour

// The default bot's paid-broadcast settings; every other bot's are
// HERALD_BOT_<NAME>_PAID_BROADCAST, _PAID_LIMIT and _PAID_BUDGET.
const (
	EnvPaidBroadcast = "HERALD_PAID_BROADCAST"
	EnvPaidLimit     = "HERALD_PAID_LIMIT"
	EnvPaidBudget    = "HERALD_PAID_BUDGET"
)

// PaidNames names the three settings of one bot's paid broadcasts, for
// reading them and for the problems found in them.
type PaidNames struct{ On, Limit, Budget string }

// DefaultPaidNames are the default bot's.
func DefaultPaidNames() PaidNames {
	return PaidNames{On: EnvPaidBroadcast, Limit: EnvPaidLimit, Budget: EnvPaidBudget}
}

// paidSpecs binds the default bot's paid broadcasts to p.
func paidSpecs(p *PaidBroadcast) []config.Spec {
	b := p.bindings()
	return []config.Spec{
		config.NewSpec(EnvPaidBroadcast, "false", `Send the default bot's messages as paid broadcasts (Bot API 7.11 allow_paid_broadcast; enable them in @BotFather and keep a Stars balance): paced at `+
			EnvPaidLimit+` bot-wide instead of HERALD_LIMIT_BOT, 0.1 Stars for each send beyond the free 30 in a second; chat limits unchanged. When Telegram refuses a paid send (no balance, not enabled), the bot falls back to HERALD_LIMIT_BOT fleet-wide for an hour and the message goes again at that limit. `+
			`Any other bot: HERALD_BOT_<NAME>_PAID_BROADCAST, _PAID_LIMIT and _PAID_BUDGET (the name as in its token variable; no flag).`, b[0]),
		config.NewSpec(EnvPaidLimit, DefaultPaidLimit.String(), `Bot-wide limit while paid broadcasts are on (windows, as for HERALD_LIMIT_BOT); at most 1000 sends per second, Telegram's cap.`, b[1]),
		config.NewSpec(EnvPaidBudget, "0", "Stars a UTC day may spend on paid sends beyond the free 30 a second (0.1 Stars each); once spent, the bot sends at HERALD_LIMIT_BOT until midnight UTC. 0: no budget.", b[2]),
	}
}

// bindings are the bindings of p's On, Limit and Budget.
func (p *PaidBroadcast) bindings() [3]config.Binding {
	limit := config.Binding{
		Set: func(s string) error {
			l, err := ratelimit.ParseLimit(s)
			if err != nil {
				return err
			}
			p.Limit = l
			return nil
		},
		Get: func() string { return p.limit().String() },
	}
	return [3]config.Binding{config.BoolVar(&p.On), limit, config.IntVar(&p.Budget)}
}

// Read sets p from the variables names (read through getenv; unset ones
// are left alone) and records each value it cannot read under its
// variable's name.
func (p *PaidBroadcast) Read(pr *config.Problems, getenv func(string) string, names PaidNames) {
	b := p.bindings()
	for i, env := range []string{names.On, names.Limit, names.Budget} {
		v := getenv(env)
		if v == "" {
			continue
		}
		if err := b[i].Set(v); err != nil {
			pr.Add(env, "%v, got %q", err, v)
		}
	}
}

// limit is Limit, or DefaultPaidLimit when it is unset.
func (p PaidBroadcast) limit() ratelimit.Limit {
	if p.Limit == nil {
		return DefaultPaidLimit
	}
	return p.Limit
}

// Check records the values of p that are out of bounds under the names of
// their settings: a limit off, faster than Telegram's 1,000 sends per unit
// (a second of retry_after) or with a span not above the paid windows'
// guard (no send could fit), and a negative budget. A bot whose paid broadcasts are off is not
// checked.
func (p PaidBroadcast) Check(pr *config.Problems, names PaidNames, unit, guard time.Duration) {
	if !p.On {
		return
	}
	l := p.limit()
	if len(l) == 0 {
		pr.Add(names.Limit, `is "off"; paid broadcasts need a limit of at most %d per %s (e.g. %s), or set %s=false`,
			paidCap, config.FmtDur(unit), DefaultPaidLimit, names.On)
	}
	for _, w := range l {
		switch {
		case w.N < 1 || w.Per <= 0:
			pr.Add(names.Limit, "has the window %s; write windows of at least 1 send per span, e.g. %s", w, DefaultPaidLimit)
		case float64(w.N)*float64(unit) > float64(paidCap)*float64(w.Per):
			pr.Add(names.Limit, "allows %s, above Telegram's cap of %d sends per %s for paid broadcasts; lower it to at most %s",
				w, paidCap, config.FmtDur(unit), ratelimit.Per(paidCap, unit))
		case guard > 0 && w.Per <= guard*ratelimit.PaidGuardFactor:
			pr.Add(names.Limit, "has the window %s, not longer than the %d times HERALD_LIMIT_GUARD (%s) the paid windows keep, so no send could fit; use a longer span, e.g. %s",
				w, ratelimit.PaidGuardFactor, config.FmtDur(guard), DefaultPaidLimit)
		}
	}
	if p.Budget < 0 {
		pr.Add(names.Budget, "must be 0 (no budget) or a number of Stars a day, got %d", p.Budget)
	}
}

// ratelimit is p as the limiter takes it: Telegram's free sends counted
// per unit (a second of retry_after).
func (p PaidBroadcast) ratelimit(unit time.Duration) ratelimit.Paid {
	return ratelimit.Paid{Limit: p.limit(), Free: telegramFreeSends, FreePer: unit, Budget: p.Budget}
}

// paidOf is the paid broadcasts of the bot called name.
func (c Config) paidOf(name string) PaidBroadcast {
	if name == keys.DefaultBot {
		return c.Paid
	}
	return c.BotPaid[name]
}

// checkBotPaid reports paid broadcasts of bots the worker does not serve
// and the bounds of every other bot's, naming Config's fields.
func (c Config) checkBotPaid(pr *config.Problems) {
	senders := c.senders()
	if c.Paid.On && senders[keys.DefaultBot] == nil {
		pr.Add("Config.Paid", "turns paid broadcasts on for the bot %q, which the worker does not serve; set them in Config.BotPaid", keys.DefaultBot)
	}
	for name, p := range c.BotPaid {
		field := "Config.BotPaid[" + strconv.Quote(name) + "]"
		switch {
		case name == keys.DefaultBot:
			pr.Add(field, "is the bot %q, whose paid broadcasts are Config.Paid; move them there", name)
		case senders[name] == nil:
			pr.Add(field, "names a bot the worker does not serve; add it to Config.Bots or remove it")
		default:
			p.Check(pr, PaidNames{On: field + ".On", Limit: field + ".Limit", Budget: field + ".Budget"}, c.RetryAfterUnit, c.Limits.EffectiveGuard())
		}
	}
}

// paidLimiter is lim with the bot's paid broadcasts, when they are on.
func (c Config) paidLimiter(lim *ratelimit.Limiter, name string) *ratelimit.Limiter {
	p := c.paidOf(name)
	if !p.On {
		return lim
	}
	return lim.WithPaid(p.ratelimit(c.RetryAfterUnit))
}

// paidReason names what a refusal of a paid send says for metrics and
// logs: "balance" (Stars), "not_enabled" or "refused".
func paidReason(desc string) string {
	switch d := strings.ToLower(desc); {
	case strings.Contains(d, "balance"), strings.Contains(d, "stars"):
		return "balance"
	case strings.Contains(d, "enabled"), strings.Contains(d, "not allowed"), strings.Contains(d, "disabled"):
		return "not_enabled"
	}
	return "refused"
}

// paidReasons are herald_paid_fallbacks_total's reasons.
var paidReasons = []string{"balance", "not_enabled", "refused", "budget"}
