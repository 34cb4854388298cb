package settings

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/worker"
)

// Worker environment variables (see also the Redis, Log and Telegram ones).
const (
	EnvQueues       = "HERALD_QUEUES"
	EnvWorkerListen = "HERALD_WORKER_LISTEN"
	// EnvWorkerMetricsToken and its _FILE form set the bearer token the
	// worker's /metrics requires.
	EnvWorkerMetricsToken     = "HERALD_WORKER_METRICS_TOKEN"
	EnvWorkerMetricsTokenFile = "HERALD_WORKER_METRICS_TOKEN_FILE"
)

// Figures the worker's settings own. Every other default and bound belongs to the component that uses
// it (worker, broker, ratelimit, digest, jobs, telegram): the settings below
// fill, check and document theirs from that component's constants, so a
// figure changed there changes here and in docs/CONFIGURATION.md's table too.
const (
	// DefaultWorkerListen is where the health and metrics server listens;
	// no component serves it. Loopback only: /metrics asks for no token
	// unless HERALD_WORKER_METRICS_TOKEN is set, so
	// serving other hosts (Prometheus, a probe from outside the container)
	// takes an explicit address such as ":9091".
	DefaultWorkerListen = "127.0.0.1:9091"
)

// checkLimitQueues reports the queues the limit settings name that the
// worker does not serve. The default priority queue names "critical" and the
// default lane "broadcast"; a fleet without those queues simply has none. Names set on
// purpose must exist.
func checkLimitQueues(p *config.Problems, l ratelimit.Config, queues map[string]int) {
	defaultPriority := slices.Equal(l.PriorityQueues, ratelimit.DefaultPriorityQueues)
	for _, name := range l.PriorityQueues {
		if _, ok := queues[name]; !ok && !defaultPriority {
			p.Add(ratelimit.EnvPriorityQueues, "names queue %q, which is not in %s (%s); add it there or remove it",
				name, EnvQueues, strings.Join(slices.Sorted(maps.Keys(queues)), ", "))
		}
	}
	defaultLanes := slices.Equal(l.Lanes, ratelimit.DefaultLanes)
	for _, name := range l.Lanes {
		if _, ok := queues[name]; !ok && !defaultLanes {
			p.Add(ratelimit.EnvLaneQueues, "names queue %q, which is not in %s (%s); add it there or remove it",
				name, EnvQueues, strings.Join(slices.Sorted(maps.Keys(queues)), ", "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.Queues)) {
		if _, ok := queues[name]; !ok {
			p.Add(ratelimit.EnvLimitQueues, "limits queue %q, which is not in %s (%s); add it there or drop the limit",
				name, EnvQueues, strings.Join(slices.Sorted(maps.Keys(queues)), ", "))
		}
	}
}

// retiredWorkerSettings are worker settings that are no longer read; setting
// one is an error that says what replaced it.
var retiredWorkerSettings = []config.Retired{
	{Env: "HERALD_BURST_BOT", Why: burstGone + "; remove it (" + ratelimit.EnvLimitBot + "=30/s allows 30 sends in any second)"},
	{Env: "HERALD_BURST_PRIVATE", Why: burstGone + "; remove it (" + ratelimit.EnvLimitPrivate + "=1/s allows 1 send in any second)"},
	{Env: "HERALD_BURST_GROUP", Why: burstGone + "; remove it (" + ratelimit.EnvLimitGroup + "=1/s,20/m allows 1 send in any second and 20 in any minute)"},
	{Env: "HERALD_BURST_PRIORITY", Why: burstGone + "; remove it (" + ratelimit.EnvLimitPriority + "=3/s lets 3 priority messages take a reserved slot in any second)"},
}

const burstGone = "limits are sliding windows (N per span) with no burst"

// Worker is the configuration of the worker binary, which takes SendMessage
// tasks from the queues and sends them through the Bot API.
type Worker struct {
	Redis    redisconn.Config
	Log      config.Log
	Telegram Telegram
	// Bots names the bots the worker sends as (HERALD_BOTS, default
	// [keys.DefaultBot]). The default bot's token is Telegram's; every
	// other bot's is in BotTokens. Each bot has its own limits, pauses and
	// chat mappings; the limit settings (Worker.Limits) apply to each bot
	// alike.
	Bots []string
	// BotTokens holds, by name, where the token of each bot other than the
	// default one comes from (HERALD_BOT_<NAME>_TOKEN or
	// HERALD_BOT_<NAME>_TOKEN_FILE, read by LoadWorker for the bots in
	// Bots). A bot missing here has no token.
	BotTokens map[string]BotToken

	// Worker holds the worker's own settings (concurrency, waiters, queues,
	// retries, shutdown, lease recovery, the retry_after unit), the send
	// limits and the digests, bound by worker.Config.Specs,
	// ratelimit.Config.Specs, digest.Config.Specs and the HERALD_QUEUES
	// setting. The runtime fields (clients, senders, logger,
	// metrics) are the caller's to set.
	Worker worker.Config
	// Listen is the address of the health and metrics server
	// (HERALD_WORKER_LISTEN, default [DefaultWorkerListen]); "" disables it
	// ("off" in the environment).
	Listen string
	// MetricsToken, when set, is required as a bearer token on the
	// worker's /metrics (HERALD_WORKER_METRICS_TOKEN, or the file
	// MetricsTokenFile names: HERALD_WORKER_METRICS_TOKEN_FILE); /livez
	// and /readyz stay open to probes.
	MetricsToken, MetricsTokenFile string
	// Updates says how presses of alert buttons are received.
	Updates interact.UpdatesConfig
	// Callbacks are the status callbacks' settings: the master key and
	// the allow-list (shared with the producer), the retry schedule, the
	// disabling, the timeout and the concurrency of their delivery.
	Callbacks statushook.Config
}

// WithDefaults returns w with every zero-valued setting replaced by its
// default. Because zero counts as unset, fields that "" would disable
// (Listen) must be cleared after calling it; a limit is switched off with
// Unlimited, which it keeps.
func (w Worker) WithDefaults() Worker {
	w.Redis = w.Redis.WithDefaults()
	w.Log = w.Log.WithDefaults()
	w.Telegram = w.Telegram.withDefaults()
	if w.Bots == nil {
		w.Bots = slices.Clone(defaultBots)
	}
	w.Worker.Limits = w.Worker.Limits.WithSettingDefaults()
	w.Worker = w.Worker.WithDefaults()
	w.Callbacks = w.Callbacks.WithDefaults()
	if w.Listen == "" {
		w.Listen = DefaultWorkerListen
	}
	return w
}

// Validate reports every problem at once. A bot's token may be absent here
// (the worker's start refuses that, naming the variable); only the
// exclusivity of its two sources and its file are checked.
func (w Worker) Validate() error {
	var p config.Problems
	w.Redis.Check(&p)
	w.Log.Validate(&p)
	w.Telegram.validate(&p)
	w.validateBots(&p)
	w.Worker.Check(&p)
	w.validatePaid(&p)
	validateQueueMap(&p, w.Worker.Queues)
	if w.Listen != "" {
		config.ValidateListen(&p, EnvWorkerListen, w.Listen, ":9091")
	}
	config.ValidateSecretPair(&p, w.MetricsToken, w.MetricsTokenFile, EnvWorkerMetricsToken, EnvWorkerMetricsTokenFile)
	w.Worker.Limits.Check(&p)
	checkLimitQueues(&p, w.Worker.Limits, w.Worker.Queues)
	w.Worker.Digest.Check(&p)
	w.Worker.Ledger.Check(&p)
	w.Updates.Check(&p)
	w.Callbacks.Check(&p)
	if _, ok := w.Worker.Queues[statushook.Queue]; ok {
		p.Add(EnvQueues, "names the queue %q, which the status callbacks use; give your queue another name", statushook.Queue)
	}
	return p.Err()
}

// validateQueueMap checks names and priorities of the worker's queues.
func validateQueueMap(p *config.Problems, queues map[string]int) {
	if len(queues) == 0 {
		p.Add(EnvQueues, "must name at least one queue, e.g. %q", defaultQueueWeights())
		return
	}
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		if !validQueueName(name) {
			p.Add(EnvQueues, "has queue name %q; names may only use a-z, 0-9, _ and -", name)
		}
		if prio := queues[name]; prio < 1 {
			p.Add(EnvQueues, "gives queue %q priority %d; priorities must be >= 1", name, prio)
		}
	}
}

// validateBots checks HERALD_BOTS and the token sources of its bots. A
// default bot's token set while HERALD_BOTS leaves that bot out would never
// be used: that is a mistake, reported as one.
func (w Worker) validateBots(p *config.Problems) {
	validateBots(p, w.Bots)
	if !slices.Contains(w.BotNames(), keys.DefaultBot) {
		for _, set := range []struct{ env, v string }{
			{EnvTelegramToken, w.Telegram.Token}, {EnvTelegramTokenFile, w.Telegram.TokenFile},
		} {
			if set.v != "" {
				p.Add(set.env, "is the token of the bot %q, which %s (%s) does not list; add %q there or remove this setting",
					keys.DefaultBot, EnvBots, botList(w.Bots), keys.DefaultBot)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.BotTokens)) {
		t := w.BotTokens[name]
		config.ValidateSecretPair(p, t.Token, t.TokenFile, BotTokenEnv(name), BotTokenFileEnv(name))
	}
}

// BotNames lists the bots the worker serves, in HERALD_BOTS order
// ([keys.DefaultBot] when Bots is unset).
func (w Worker) BotNames() []string { return botNames(w.Bots) }

// Token returns the default bot's token, reading TokenFile when it is set.
// It returns "" and no error when neither is set.
func (w Worker) Token() (string, error) {
	return w.Telegram.token()
}

// BotToken returns the token of the bot called name, reading its file when
// one is set: Token for the default bot, BotTokens[name] for any other. It
// returns "" and no error when the bot has none; errors name the variable
// and never hold the token.
func (w Worker) BotToken(name string) (string, error) {
	if name == "" || name == keys.DefaultBot {
		return w.Token()
	}
	t := w.BotTokens[name]
	return config.SecretPair(t.Token, t.TokenFile, BotTokenEnv(name), BotTokenFileEnv(name))
}

// readBotTokens reads the token variables of every bot in w.Bots other
// than the default one through getenv. Names HERALD_BOTS does not accept
// are skipped (Validate reports them). HERALD_BOT_DEFAULT_TOKEN[_FILE] is
// refused: the default bot keeps TELEGRAM_BOT_TOKEN, and a second spelling
// would only raise the question of which one wins.
func (w *Worker) readBotTokens(getenv func(string) string) error {
	var p config.Problems
	for _, env := range []string{botEnvStem(keys.DefaultBot) + "_TOKEN", botEnvStem(keys.DefaultBot) + "_TOKEN_FILE"} {
		if strings.TrimSpace(getenv(env)) != "" {
			p.Add(env, "is not read: the bot %q takes its token from %s or %s; move it there",
				keys.DefaultBot, EnvTelegramToken, EnvTelegramTokenFile)
		}
	}
	for _, name := range w.Bots {
		if name == keys.DefaultBot || !keys.ValidBotName(name) {
			continue
		}
		t := BotToken{
			Token:     strings.TrimSpace(getenv(BotTokenEnv(name))),
			TokenFile: strings.TrimSpace(getenv(BotTokenFileEnv(name))),
		}
		if t == (BotToken{}) {
			continue
		}
		if w.BotTokens == nil {
			w.BotTokens = map[string]BotToken{}
		}
		w.BotTokens[name] = t
	}
	return p.Err()
}

// botTokenSpecs renders the token sources of the bots other than the
// default one, with the tokens masked, for String and LogValue. They are
// not bound for loading: readBotTokens reads them.
func botTokenSpecs(tokens map[string]BotToken) []config.Spec {
	var specs []config.Spec
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		t := tokens[name]
		specs = append(specs,
			config.SecretSpec(BotTokenEnv(name), "", config.Binding{Get: func() string { return t.Token }}),
			config.NewSpec(BotTokenFileEnv(name), "", "", config.Binding{Get: func() string { return t.TokenFile }}),
		)
	}
	return specs
}

// LogValue renders every setting with secrets masked, so a Worker can be
// logged with slog.
func (w Worker) LogValue() slog.Value {
	return slog.GroupValue(config.LogAttrs(slices.Concat(workerSpecs(&w), botTokenSpecs(w.BotTokens), botPaidSpecs(w.Worker.BotPaid)))...)
}

// String renders every setting as ENV=value with secrets masked, the
// token variables of the bots after the others.
func (w Worker) String() string {
	return config.Render(slices.Concat(workerSpecs(&w), botTokenSpecs(w.BotTokens), botPaidSpecs(w.Worker.BotPaid)))
}

// WorkerSettings describes every worker setting in documentation order.
func WorkerSettings() []config.Setting {
	var w Worker
	return config.Describe(workerSpecs(&w))
}

// WorkerUsage writes the worker's flag help to out.
func WorkerUsage(out io.Writer) error {
	return config.Usage(out, WorkerSettings())
}

// LoadWorker resolves the worker configuration: defaults, then the
// environment read through getenv (nil means none), then flags in args;
// then the token variables of the bots HERALD_BOTS names, which only the
// environment sets. It returns every problem at once, and flag.ErrHelp for
// -h. Positional arguments are an error; use LoadWorkerArgs to accept them.
func LoadWorker(args []string, getenv func(string) string) (Worker, error) {
	w, rest, err := LoadWorkerArgs(args, getenv)
	if err != nil {
		return Worker{}, err
	}
	if len(rest) > 0 {
		return Worker{}, fmt.Errorf("config: unexpected argument %q; the worker takes only flags", rest[0])
	}
	return w, nil
}

// LoadWorkerArgs is LoadWorker that also returns the arguments after the
// flags.
func LoadWorkerArgs(args []string, getenv func(string) string) (Worker, []string, error) {
	w := Worker{}.WithDefaults()
	rest, err := config.Load("worker", workerSpecs(&w), args, getenv, retiredWorkerSettings...)
	if err != nil {
		return Worker{}, nil, err
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if err := errors.Join(w.readBotTokens(getenv), w.readBotPaid(getenv), w.Validate()); err != nil {
		return Worker{}, nil, err
	}
	return w, rest, nil
}

// workerSpecs binds every worker setting to w, in documentation order: each
// component's settings as it declares them.
func workerSpecs(w *Worker) []config.Spec {
	listen := config.NewSpec(EnvWorkerListen, DefaultWorkerListen,
		`Address of the health and metrics HTTP server (flag alias -listen); loopback only by default, as /metrics asks for no token unless HERALD_WORKER_METRICS_TOKEN is set (":9091" lets Prometheus on other hosts scrape it); "off" disables it.`, config.OptStringVar(&w.Listen))
	listen.Alias = "listen"
	return slices.Concat(
		commonSpecs(&w.Redis, &w.Log, &w.Bots),
		telegramSpecs(&w.Telegram),
		w.Worker.Specs(),
		[]config.Spec{
			queuesSpec(queueMapVar(&w.Worker.Queues)),
			listen,
			config.SecretSpec(EnvWorkerMetricsToken, "Bearer token the worker's /metrics requires (/livez and /readyz stay open); "+
				"unset serves it without authentication, which is why the server listens on loopback by default.",
				config.StringVar(&w.MetricsToken)),
			config.NewSpec(EnvWorkerMetricsTokenFile, "", "File holding the worker's metrics token; excludes "+EnvWorkerMetricsToken+".",
				config.StringVar(&w.MetricsTokenFile)),
		},
		w.Worker.Limits.Specs(),
		w.Worker.Digest.Specs(),
		w.Worker.Ledger.Specs(),
		w.Updates.Specs(),
		w.Callbacks.Specs(),
	)
}

// Metrics returns the bearer token the worker's /metrics requires ("" for
// none), reading MetricsTokenFile when that is set.
func (w Worker) Metrics() (string, error) {
	return config.SecretPair(w.MetricsToken, w.MetricsTokenFile, EnvWorkerMetricsToken, EnvWorkerMetricsTokenFile)
}
