package telegramfake

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Paid is what a bot's owner set up for paid broadcasts (Bot API 7.11):
// whether they are enabled in @BotFather and the bot's Telegram Stars
// balance. The zero Paid is a bot without them.
type Paid struct {
	// Enabled says paid broadcasts are turned on for the bot. A send with
	// allow_paid_broadcast from a bot without them is refused
	// (ErrPaidNotEnabled).
	Enabled bool
	// Balance is the bot's Stars balance. Each charged send takes
	// StarsPerCharge from it; a charged send it cannot pay for is refused
	// (ErrBalanceTooLow). Start refuses a negative or NaN balance; New
	// reads it as 0.
	Balance float64
}

// StarsPerCharge is what Telegram takes from the bot's balance for one
// send beyond the free limit: "a fee of 0.1 Telegram Stars per message".
const StarsPerCharge = 0.1

// The refusals of a paid send. The Bot API documents neither: the balance
// one is the error Telegram's API gives when a Stars payment meets too low
// a balance (BALANCE_TOO_LOW, which the Bot API server passes on after
// "Bad Request: "), and the other is the fake's own wording. Clients should
// not depend on either text beyond its mention of the balance or of paid
// broadcasts.
const (
	ErrBalanceTooLow  = "Bad Request: BALANCE_TOO_LOW"
	ErrPaidNotEnabled = "Bad Request: paid broadcasts are not enabled for the bot; enable them in @BotFather"
)

// paidBotLimit is the bot-wide limit of sends with allow_paid_broadcast:
// "up to 1000 messages per second".
var paidBotLimit = limit{{N: 1000, Per: time.Second}}

// wallet is one bot's paid broadcasts as the fake runs them: whether they
// are enabled and its balance, in tenths of a Star so that charges add up
// exactly. Guarded by Server.mu.
type wallet struct {
	enabled bool
	tenths  int64
}

func newWallet(p Paid) wallet {
	w := wallet{enabled: p.Enabled}
	if p.Balance > 0 && !math.IsNaN(p.Balance) {
		w.tenths = int64(math.Floor(p.Balance/StarsPerCharge + 1e-9))
	}
	return w
}

// pay takes one charge from the balance; it reports false, taking
// nothing, when the balance is too low.
func (w *wallet) pay() bool {
	if w.tenths < 1 {
		return false
	}
	w.tenths--
	return true
}

// paidOf is the paid broadcasts Config gives the bot called name.
func (c Config) paidOf(name string) Paid {
	if p, ok := c.PaidBroadcastByBot[name]; ok {
		return p
	}
	return c.PaidBroadcast
}

// validatePaid reports balances Start refuses and per-bot settings naming a
// bot the fake does not serve.
func (c Config) validatePaid() error {
	var bad []string
	check := func(field string, p Paid) {
		if p.Balance < 0 || math.IsNaN(p.Balance) || math.IsInf(p.Balance, 0) {
			bad = append(bad, fmt.Sprintf("telegramfake: Config.%s.Balance %v: want 0 or more Stars", field, p.Balance))
		}
	}
	check("PaidBroadcast", c.PaidBroadcast)
	names := map[string]bool{}
	for _, e := range c.withDefaults().botEntries() {
		names[e.name] = true
	}
	keys := make([]string, 0, len(c.PaidBroadcastByBot))
	for name := range c.PaidBroadcastByBot {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		check(fmt.Sprintf("PaidBroadcastByBot[%q]", name), c.PaidBroadcastByBot[name])
		if !names[name] {
			bad = append(bad, fmt.Sprintf("telegramfake: Config.PaidBroadcastByBot names %q, which is no bot of Token or Tokens", name))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(bad, "; "))
}

// chargedStars is what n charged sends cost, rounded to the tenth.
func chargedStars(n int64) float64 { return float64(n) / 10 }
