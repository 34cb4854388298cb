package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/worker"
)

// botPaidNames are the paid-broadcast settings of the bot called name:
// the default bot's HERALD_PAID_*, HERALD_BOT_<NAME>_PAID_BROADCAST,
// _PAID_LIMIT and _PAID_BUDGET for any other (named as its token
// variable).
func botPaidNames(name string) worker.PaidNames {
	if name == "" || name == keys.DefaultBot {
		return worker.DefaultPaidNames()
	}
	return stemPaidNames(name)
}

// stemPaidNames are HERALD_BOT_<NAME>_PAID_BROADCAST, _PAID_LIMIT and
// _PAID_BUDGET.
func stemPaidNames(name string) worker.PaidNames {
	stem := botEnvStem(name)
	return worker.PaidNames{On: stem + "_PAID_BROADCAST", Limit: stem + "_PAID_LIMIT", Budget: stem + "_PAID_BUDGET"}
}

// readBotPaid reads the paid-broadcast settings of every bot in w.Bots
// other than the default one through getenv, like their tokens; the
// default bot's HERALD_BOT_DEFAULT_PAID_* spellings are refused.
func (w *Worker) readBotPaid(getenv func(string) string) error {
	var p config.Problems
	trimmed := func(env string) string { return strings.TrimSpace(getenv(env)) }
	wrong := stemPaidNames(keys.DefaultBot)
	for _, env := range []string{wrong.On, wrong.Limit, wrong.Budget} {
		if trimmed(env) != "" {
			p.Add(env, "is not read: the paid broadcasts of the bot %q are %s, %s and %s; move it there",
				keys.DefaultBot, worker.EnvPaidBroadcast, worker.EnvPaidLimit, worker.EnvPaidBudget)
		}
	}
	for _, name := range w.Bots {
		if name == keys.DefaultBot || !keys.ValidBotName(name) {
			continue
		}
		names := botPaidNames(name)
		if trimmed(names.On) == "" && trimmed(names.Limit) == "" && trimmed(names.Budget) == "" {
			continue
		}
		var pb worker.PaidBroadcast
		pb.Read(&p, trimmed, names)
		if w.Worker.BotPaid == nil {
			w.Worker.BotPaid = map[string]worker.PaidBroadcast{}
		}
		w.Worker.BotPaid[name] = pb
	}
	return p.Err()
}

// validatePaid checks every other bot's paid broadcasts by the names of
// their settings (the default bot's are the worker's own settings), and
// refuses the default bot's when HERALD_BOTS leaves that bot out.
func (w Worker) validatePaid(p *config.Problems) {
	if w.Worker.Paid.On && !slices.Contains(w.BotNames(), keys.DefaultBot) {
		p.Add(worker.EnvPaidBroadcast, "turns on the paid broadcasts of the bot %q, which %s (%s) does not list; add %q there or use HERALD_BOT_<NAME>_PAID_BROADCAST",
			keys.DefaultBot, EnvBots, botList(w.Bots), keys.DefaultBot)
	}
	unit, guard := w.Worker.RetryAfterUnit, w.Worker.Limits.EffectiveGuard()
	for _, name := range slices.Sorted(maps.Keys(w.Worker.BotPaid)) {
		names := botPaidNames(name)
		if !slices.Contains(w.Bots, name) {
			p.Add(names.On, "sets the paid broadcasts of the bot %q, which %s (%s) does not list", name, EnvBots, botList(w.Bots))
			continue
		}
		w.Worker.BotPaid[name].Check(p, names, unit, guard)
	}
}

// botPaidSpecs renders every other bot's paid broadcasts, for String and
// LogValue. They are not bound for loading: readBotPaid reads them.
func botPaidSpecs(paid map[string]worker.PaidBroadcast) []config.Spec {
	var specs []config.Spec
	for _, name := range slices.Sorted(maps.Keys(paid)) {
		pb, names := paid[name], botPaidNames(name)
		get := func(v string) config.Binding { return config.Binding{Get: func() string { return v }} }
		limit := worker.DefaultPaidLimit
		if pb.Limit != nil {
			limit = pb.Limit
		}
		specs = append(specs,
			config.NewSpec(names.On, "", "", get(fmt.Sprint(pb.On))),
			config.NewSpec(names.Limit, "", "", get(limit.String())),
			config.NewSpec(names.Budget, "", "", get(fmt.Sprint(pb.Budget))),
		)
	}
	return specs
}
