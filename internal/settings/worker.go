package settings

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/worker"
)

// Worker environment variables (see also the Redis, Log and Telegram ones).
const (
	EnvConcurrency     = "HERALD_CONCURRENCY"
	EnvWaiters         = "HERALD_WAITERS"
	EnvWaitLong        = "HERALD_WAIT_LONG"
	EnvQueues          = "HERALD_QUEUES"
	EnvStrictPriority  = "HERALD_STRICT_PRIORITY"
	EnvShutdownTimeout = "HERALD_SHUTDOWN_TIMEOUT"
	EnvBackoffBase     = "HERALD_BACKOFF_BASE"
	EnvBackoffCap      = "HERALD_BACKOFF_CAP"
	EnvSentRetention   = "HERALD_SENT_RETENTION"
	EnvLeaseRecovery   = "HERALD_LEASE_RECOVERY_AFTER"
	EnvWorkerListen    = "HERALD_WORKER_LISTEN"
	EnvLimitBot        = "HERALD_LIMIT_BOT"
	EnvLimitPrivate    = "HERALD_LIMIT_PRIVATE"
	EnvLimitGroup      = "HERALD_LIMIT_GROUP"
	EnvLimitQueues     = "HERALD_LIMIT_QUEUES"
	EnvLimitPriority   = "HERALD_LIMIT_PRIORITY"
	EnvPriorityQueues  = "HERALD_PRIORITY_QUEUES"
	EnvLimitGuard      = "HERALD_LIMIT_GUARD"
	EnvPauseBotMax     = "HERALD_PAUSE_BOT_MAX"

	EnvDigestGracePeriod  = "HERALD_DIGEST_GRACE_PERIOD"
	EnvDigestMaxDelay     = "HERALD_DIGEST_MAX_DELAY"
	EnvDigestMaxSize      = "HERALD_DIGEST_MAX_SIZE"
	EnvDigestMaxMessages  = "HERALD_DIGEST_MAX_MESSAGES"
	EnvDigestReclaimAfter = "HERALD_DIGEST_RECLAIM_AFTER"
)

// Figures the worker's settings own; so do the priority's defaults, beside
// Limits. Every other default and bound belongs to the component that uses
// it (worker, broker, ratelimit, digest, jobs, telegram): the settings below
// fill, check and document theirs from that component's constants, so a
// figure changed there changes here and in the README's table too.
const (
	// DefaultWorkerListen is where the health and metrics server listens;
	// no component serves it. Loopback only: /metrics asks for no token, so
	// serving other hosts (Prometheus, a probe from outside the container)
	// takes an explicit address such as ":9091".
	DefaultWorkerListen = "127.0.0.1:9091"
	// maxWaitLong is the longest HERALD_WAIT_LONG accepted. It is the
	// settings' own bound: worker.Config takes any wait.
	maxWaitLong = time.Hour
)

// Digest shapes the digests coalescible messages are folded into, per
// destination chat (and forum topic).
type Digest struct {
	// GracePeriod flushes a destination's pending items once none has
	// arrived for this long (HERALD_DIGEST_GRACE_PERIOD, default
	// [digest.DefaultGracePeriod]; whole seconds, at least 1s).
	GracePeriod time.Duration
	// MaxDelay flushes them once the oldest has waited this long
	// (HERALD_DIGEST_MAX_DELAY, default [digest.DefaultMaxDelay]; whole
	// seconds, at least GracePeriod).
	MaxDelay time.Duration
	// MaxSize flushes a destination at once when this many items wait, and
	// bounds the items of one digest (HERALD_DIGEST_MAX_SIZE, default
	// [digest.DefaultMaxSize], at most [digest.MaxGroupSize]).
	MaxSize int
	// MaxMessages is the most messages one digest is rendered into; the
	// items that do not fit go into the next digest
	// (HERALD_DIGEST_MAX_MESSAGES, default [digest.DefaultMaxMessages], at
	// most [digest.MaxMessagesLimit]).
	MaxMessages int
	// ReclaimAfter is how old an aggregation left behind by a crashed
	// worker gets before its items go back to their destination's group
	// (HERALD_DIGEST_RECLAIM_AFTER, default [digest.DefaultReclaimAfter];
	// below [broker.AggregationTimeout]).
	ReclaimAfter time.Duration
}

// withDefaults fills zero digest settings with the digest package's
// defaults.
func (d Digest) withDefaults() Digest {
	if d.GracePeriod == 0 {
		d.GracePeriod = digest.DefaultGracePeriod
	}
	if d.MaxDelay == 0 {
		d.MaxDelay = digest.DefaultMaxDelay
	}
	if d.MaxSize == 0 {
		d.MaxSize = digest.DefaultMaxSize
	}
	if d.MaxMessages == 0 {
		d.MaxMessages = digest.DefaultMaxMessages
	}
	if d.ReclaimAfter == 0 {
		d.ReclaimAfter = digest.DefaultReclaimAfter
	}
	return d
}

// validate checks the digest settings against the bounds digest.Config
// enforces, reporting them by environment variable.
func (d Digest) validate(p *config.Problems) {
	if d.GracePeriod < time.Second || d.GracePeriod%time.Second != 0 {
		p.Add(EnvDigestGracePeriod, "must be a whole number of seconds, at least 1s (asynq counts seconds), got %s", config.FmtDur(d.GracePeriod))
	}
	switch {
	case d.MaxDelay%time.Second != 0:
		p.Add(EnvDigestMaxDelay, "must be a whole number of seconds (e.g. %s), got %s", config.FmtDur(digest.DefaultMaxDelay), config.FmtDur(d.MaxDelay))
	case d.MaxDelay < d.GracePeriod:
		p.Add(EnvDigestMaxDelay, "is %s, below %s which is %s; raise it or lower the grace period",
			config.FmtDur(d.MaxDelay), config.Ref(EnvDigestGracePeriod), config.FmtDur(d.GracePeriod))
	}
	if d.MaxSize < 1 || d.MaxSize > digest.MaxGroupSize {
		p.Add(EnvDigestMaxSize, "must be between 1 and %d, got %d", digest.MaxGroupSize, d.MaxSize)
	}
	if d.MaxMessages < 1 || d.MaxMessages > digest.MaxMessagesLimit {
		p.Add(EnvDigestMaxMessages, "must be between 1 and %d, got %d", digest.MaxMessagesLimit, d.MaxMessages)
	}
	if d.ReclaimAfter < time.Second || d.ReclaimAfter >= broker.AggregationTimeout {
		p.Add(EnvDigestReclaimAfter, "must be at least 1s and below %s (when asynq reclaims on its own), got %s",
			config.FmtDur(broker.AggregationTimeout), config.FmtDur(d.ReclaimAfter))
	}
}

// Limits are the Telegram send limits the worker enforces before calling the
// Bot API. Each is a set of sliding windows that must all hold: "1/s,20/m"
// allows 1 send in any second and 20 in any minute. A nil Windows is unset
// (WithDefaults fills it); Unlimited ("off") switches the limit off.
type Limits struct {
	// Bot limits all sends of the bot (HERALD_LIMIT_BOT, default
	// [ratelimit.DefaultBot]).
	Bot Windows
	// Private limits sends to one private chat (HERALD_LIMIT_PRIVATE,
	// default [ratelimit.DefaultPrivate]).
	Private Windows
	// Group limits sends to one group, supergroup or channel
	// (HERALD_LIMIT_GROUP, default [ratelimit.DefaultGroup]).
	Group Windows
	// Queues limits the sends of whole queues (HERALD_LIMIT_QUEUES, e.g.
	// "default=20/s+100/m,low=5/s"; empty by default).
	Queues map[string]Windows
	// PriorityQueues are the queues whose messages do not wait behind the
	// bot-wide slots other messages already reserved (HERALD_PRIORITY_QUEUES,
	// default [jobs.QueueCritical]): such a message takes the earliest slot
	// reserved for another chat's message, which moves to the end of the
	// bot-wide schedule. Chat limits and the bot-wide limit still hold.
	PriorityQueues []string
	// Priority bounds how many priority-queue messages per window may take
	// another message's slot that way (HERALD_LIMIT_PRIORITY, default 3/s;
	// "off" disables the priority).
	Priority Windows
	// Guard is added to every window, so that sends N apart are at least the
	// window plus this much apart by Redis' clock; it absorbs dispatch and
	// network jitter (HERALD_LIMIT_GUARD, default [ratelimit.DefaultGuard];
	// at least 0 and below the shortest bot, private and group window).
	// WithDefaults fills a zero Guard; after it, 0 means no guard.
	Guard time.Duration
	// BotPauseMax is the longest bot-wide pause one 429 causes; the chat
	// itself waits its whole retry_after. Telegram's 429 does not say
	// whether the chat or the whole bot is flooded (HERALD_PAUSE_BOT_MAX,
	// default [ratelimit.DefaultBotPauseMax]). Negative ("off"): a 429
	// pauses only its chat.
	BotPauseMax time.Duration
}

// The priority is the one limit whose default the limiter leaves off (a
// library user opts in); the fleet's settings turn it on for the critical
// queue, so these two defaults are the settings' own.
var (
	defaultLimitPriority  = Windows{{N: 3, Per: time.Second}}
	defaultPriorityQueues = []string{jobs.QueueCritical}
)

// withDefaults fills nil limits and zero durations: the bot, chat, guard
// and pause defaults are the limiter's.
func (l Limits) withDefaults() Limits {
	fill := func(ws *Windows, def Windows) {
		if *ws == nil {
			*ws = slices.Clone(def)
		}
	}
	fill(&l.Bot, windowsOf(ratelimit.DefaultBot))
	fill(&l.Private, windowsOf(ratelimit.DefaultPrivate))
	fill(&l.Group, windowsOf(ratelimit.DefaultGroup))
	fill(&l.Priority, defaultLimitPriority)
	if l.PriorityQueues == nil {
		l.PriorityQueues = slices.Clone(defaultPriorityQueues)
	}
	if l.Guard == 0 {
		l.Guard = ratelimit.DefaultGuard
	}
	if l.BotPauseMax == 0 {
		l.BotPauseMax = ratelimit.DefaultBotPauseMax
	}
	return l
}

// validate checks the windows, the guard and that per-queue limits name
// known queues.
func (l Limits) validate(p *config.Problems, queues map[string]int) {
	check := func(ws Windows, env string) {
		if err := ws.check(); err != nil {
			p.Add(env, "%v (got %s)", err, ws)
		}
	}
	check(l.Bot, EnvLimitBot)
	check(l.Private, EnvLimitPrivate)
	check(l.Group, EnvLimitGroup)
	check(l.Priority, EnvLimitPriority)
	if l.Guard < 0 {
		p.Add(EnvLimitGuard, "must be >= 0 (e.g. %s), got %s", config.FmtDur(ratelimit.DefaultGuard), config.FmtDur(l.Guard))
	} else {
		for _, c := range []struct {
			env string
			ws  Windows
		}{{EnvLimitBot, l.Bot}, {EnvLimitPrivate, l.Private}, {EnvLimitGroup, l.Group}} {
			if sh := c.ws.Shortest(); len(c.ws) > 0 && l.Guard >= sh {
				p.Add(EnvLimitGuard, "is %s, not below the shortest window of %s, %s; lower it below %s (default %s)",
					config.FmtDur(l.Guard), config.Ref(c.env), c.ws, config.FmtDur(sh), config.FmtDur(ratelimit.DefaultGuard))
				break
			}
		}
	}
	// The default names "critical"; a fleet without that queue simply has no
	// priority queue. Names set on purpose must exist.
	defaultPriority := slices.Equal(l.PriorityQueues, defaultPriorityQueues)
	for _, name := range l.PriorityQueues {
		if _, ok := queues[name]; !ok && !defaultPriority {
			p.Add(EnvPriorityQueues, "names queue %q, which is not in %s (%s); add it there or remove it",
				name, EnvQueues, strings.Join(slices.Sorted(maps.Keys(queues)), ", "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l.Queues)) {
		if err := l.Queues[name].check(); err != nil {
			p.Add(EnvLimitQueues, "has a limit for queue %q that %v", name, err)
		}
		if _, ok := queues[name]; !ok {
			p.Add(EnvLimitQueues, "limits queue %q, which is not in %s (%s); add it there or drop the limit",
				name, EnvQueues, strings.Join(slices.Sorted(maps.Keys(queues)), ", "))
		}
	}
}

// retiredWorkerSettings are worker settings that are no longer read; setting
// one is an error that says what replaced it.
var retiredWorkerSettings = []config.Retired{
	{Env: "HERALD_BURST_BOT", Why: burstGone + "; remove it (" + EnvLimitBot + "=30/s allows 30 sends in any second)"},
	{Env: "HERALD_BURST_PRIVATE", Why: burstGone + "; remove it (" + EnvLimitPrivate + "=1/s allows 1 send in any second)"},
	{Env: "HERALD_BURST_GROUP", Why: burstGone + "; remove it (" + EnvLimitGroup + "=1/s,20/m allows 1 send in any second and 20 in any minute)"},
	{Env: "HERALD_BURST_PRIORITY", Why: burstGone + "; remove it (" + EnvLimitPriority + "=3/s lets 3 priority messages take a reserved slot in any second)"},
}

const burstGone = "limits are sliding windows (N per span) with no burst"

// Worker is the configuration of the worker binary, which takes SendMessage
// tasks from the queues and sends them through the Bot API.
type Worker struct {
	Redis    Redis
	Log      config.Log
	Telegram Telegram
	Limits   Limits

	// Bots names the bots the worker sends as (HERALD_BOTS, default
	// [keys.DefaultBot]). The default bot's token is Telegram's; every
	// other bot's is in BotTokens. Each bot has its own limits, pauses and
	// chat mappings; the Limits settings apply to each bot alike.
	Bots []string
	// BotTokens holds, by name, where the token of each bot other than the
	// default one comes from (HERALD_BOT_<NAME>_TOKEN or
	// HERALD_BOT_<NAME>_TOKEN_FILE, read by LoadWorker for the bots in
	// Bots). A bot missing here has no token.
	BotTokens map[string]BotToken

	// Concurrency is how many tasks run at once (HERALD_CONCURRENCY,
	// default [worker.DefaultConcurrency]).
	Concurrency int
	// Waiters is how many more tasks may wait for their send slot in the
	// process, for up to WaitLong, instead of a round trip through Redis
	// (HERALD_WAITERS, default [worker.DefaultWaiters]; -1 for none).
	Waiters int
	// WaitLong is the longest wait a waiter sleeps through
	// (HERALD_WAIT_LONG, default [worker.DefaultWaitLong]).
	WaitLong time.Duration
	// Queues maps queue names to weighted priorities (HERALD_QUEUES, default
	// [jobs.DefaultQueueWeights]). Names must match [a-z0-9_-]+.
	Queues map[string]int
	// StrictPriority drains higher-priority queues first instead of
	// weighting them (HERALD_STRICT_PRIORITY, false).
	StrictPriority bool
	// ShutdownTimeout is how long running tasks get to finish on shutdown
	// (HERALD_SHUTDOWN_TIMEOUT, default [broker.DefaultShutdownTimeout]).
	ShutdownTimeout time.Duration
	// BackoffBase is the longest first wait after a 5xx or transport error;
	// later waits double (HERALD_BACKOFF_BASE, default
	// [worker.DefaultBackoffBase]).
	BackoffBase time.Duration
	// BackoffCap bounds any single retry wait (HERALD_BACKOFF_CAP, default
	// [worker.DefaultBackoffCap]).
	BackoffCap time.Duration
	// SentRetention is how long progress records of unfinished messages
	// ("already sent" markers; a delivered message's lives at most
	// worker.FinishedRecordTTL) are kept so a retried
	// task is not delivered twice (HERALD_SENT_RETENTION, default
	// [worker.DefaultSentRetention]).
	SentRetention time.Duration
	// LeaseRecoveryAfter is how long a task's lease may go without being
	// extended before another worker takes the task over: the crashed
	// worker's messages are late by about this much
	// (HERALD_LEASE_RECOVERY_AFTER, default [broker.DefaultLeaseRecoveryAfter];
	// from [broker.MinLeaseRecoveryAfter] to below [broker.LeaseDuration], or
	// a negative value to leave recovery to asynq, 60-90s).
	LeaseRecoveryAfter time.Duration
	// Listen is the address of the health and metrics server
	// (HERALD_WORKER_LISTEN, default [DefaultWorkerListen]); "" disables it
	// ("off" in the environment).
	Listen string
	// Digest shapes the digests of coalescible messages.
	Digest Digest
	// Updates says how presses of alert buttons are received.
	Updates interact.UpdatesConfig
}

// WithDefaults returns w with every zero-valued setting replaced by its
// default. Because zero counts as unset, fields that "" would disable
// (Listen) must be cleared after calling it; a limit is switched off with
// Unlimited, which it keeps.
func (w Worker) WithDefaults() Worker {
	w.Redis = w.Redis.withDefaults()
	w.Log = w.Log.WithDefaults()
	w.Telegram = w.Telegram.withDefaults()
	w.Limits = w.Limits.withDefaults()
	if w.Bots == nil {
		w.Bots = slices.Clone(defaultBots)
	}
	if w.Concurrency == 0 {
		w.Concurrency = worker.DefaultConcurrency
	}
	if w.Waiters == 0 {
		w.Waiters = worker.DefaultWaiters
	}
	if w.WaitLong == 0 {
		w.WaitLong = worker.DefaultWaitLong
	}
	if w.Queues == nil {
		w.Queues = jobs.DefaultQueueWeights()
	}
	if w.ShutdownTimeout == 0 {
		w.ShutdownTimeout = broker.DefaultShutdownTimeout
	}
	if w.BackoffBase == 0 {
		w.BackoffBase = worker.DefaultBackoffBase
	}
	if w.BackoffCap == 0 {
		w.BackoffCap = worker.DefaultBackoffCap
	}
	if w.SentRetention == 0 {
		w.SentRetention = worker.DefaultSentRetention
	}
	if w.LeaseRecoveryAfter == 0 {
		w.LeaseRecoveryAfter = broker.DefaultLeaseRecoveryAfter
	}
	if w.Listen == "" {
		w.Listen = DefaultWorkerListen
	}
	w.Digest = w.Digest.withDefaults()
	return w
}

// Validate reports every problem at once. A bot's token may be absent here
// (the worker's start refuses that, naming the variable); only the
// exclusivity of its two sources and its file are checked.
func (w Worker) Validate() error {
	var p config.Problems
	w.Redis.validate(&p)
	w.Log.Validate(&p)
	w.Telegram.validate(&p)
	w.validateBots(&p)
	if w.Waiters < -1 {
		p.Add(EnvWaiters, "must be -1 (none) or more, got %d", w.Waiters)
	}
	if w.WaitLong < 0 || w.WaitLong > maxWaitLong {
		p.Add(EnvWaitLong, "must be between 0 and %s (e.g. %s), got %s", config.FmtDur(maxWaitLong), config.FmtDur(worker.DefaultWaitLong), config.FmtDur(w.WaitLong))
	}
	if w.Concurrency < 1 {
		p.Add(EnvConcurrency, "must be >= 1, got %d", w.Concurrency)
	}
	validateQueueMap(&p, w.Queues)
	p.Positive(EnvShutdownTimeout, w.ShutdownTimeout, broker.DefaultShutdownTimeout)
	p.Positive(EnvBackoffBase, w.BackoffBase, worker.DefaultBackoffBase)
	p.Positive(EnvBackoffCap, w.BackoffCap, worker.DefaultBackoffCap)
	if w.BackoffBase > 0 && w.BackoffCap > 0 && w.BackoffBase > w.BackoffCap {
		p.Add(EnvBackoffBase, "is %s, above %s which is %s; lower the base or raise the cap",
			config.FmtDur(w.BackoffBase), config.Ref(EnvBackoffCap), config.FmtDur(w.BackoffCap))
	}
	p.AtLeastSecond(EnvSentRetention, w.SentRetention, worker.DefaultSentRetention)
	if d := w.LeaseRecoveryAfter; d > 0 && (d < broker.MinLeaseRecoveryAfter || d >= broker.LeaseDuration) {
		p.Add(EnvLeaseRecovery, "must be between %s and %s (live workers extend leases every 5s; asynq's lease is %s), or -1s to turn the sweep off, got %s",
			config.FmtDur(broker.MinLeaseRecoveryAfter), config.FmtDur(broker.LeaseDuration-time.Second), config.FmtDur(broker.LeaseDuration), config.FmtDur(d))
	}
	if w.Listen != "" {
		config.ValidateListen(&p, EnvWorkerListen, w.Listen, ":9091")
	}
	w.Limits.validate(&p, w.Queues)
	w.Digest.validate(&p)
	w.Updates.Check(&p)
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
	return slog.GroupValue(config.LogAttrs(append(workerSpecs(&w), botTokenSpecs(w.BotTokens)...))...)
}

// String renders every setting as ENV=value with secrets masked, the
// token variables of the bots after the others.
func (w Worker) String() string {
	return config.Render(append(workerSpecs(&w), botTokenSpecs(w.BotTokens)...))
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
	if err := errors.Join(w.readBotTokens(getenv), w.Validate()); err != nil {
		return Worker{}, nil, err
	}
	return w, rest, nil
}

// workerSpecs binds every worker setting to w.
func workerSpecs(w *Worker) []config.Spec {
	listen := config.NewSpec(EnvWorkerListen, DefaultWorkerListen,
		`Address of the health and metrics HTTP server (flag alias -listen); loopback only by default, as /metrics asks for no token (":9091" lets Prometheus on other hosts scrape it); "off" disables it.`, config.OptStringVar(&w.Listen))
	listen.Alias = "listen"
	specs := commonSpecs(&w.Redis, &w.Log, &w.Bots)
	return append(append(specs,
		config.SecretSpec(EnvTelegramToken, `Token of the bot "default" (see `+EnvBots+`). Prefer the _FILE variant.`,
			config.StringVar(&w.Telegram.Token)),
		config.NewSpec(EnvTelegramTokenFile, "", "File holding the bot token (content trimmed); excludes "+EnvTelegramToken+".",
			config.StringVar(&w.Telegram.TokenFile)),
		config.NewSpec(EnvTelegramAPIURL, telegram.DefaultAPIURL, "Bot API base URL, http:// or https://.",
			config.BaseURLVar(&w.Telegram.APIURL)),
		config.NewSpec(EnvTelegramTimeout, config.FmtDur(telegram.DefaultTimeout), "Timeout of one Bot API request.", config.DurationVar(&w.Telegram.Timeout)),
		config.NewSpec(EnvTelegramRetryAfterUnit, config.FmtDur(worker.DefaultRetryAfterUnit), "Length of one second of a 429's retry_after; change it only for a fake Bot API that runs Telegram's clock faster.",
			config.DurationVar(&w.Telegram.RetryAfterUnit)),
		config.NewSpec(EnvConcurrency, strconv.Itoa(worker.DefaultConcurrency), "Number of tasks processed at the same time.", config.IntVar(&w.Concurrency)),
		config.NewSpec(EnvWaiters, strconv.Itoa(worker.DefaultWaiters), "Further tasks that may wait for their send slot in memory (a sleeping goroutine each) instead of a round trip through Redis; -1 for none.",
			config.IntVar(&w.Waiters)),
		config.NewSpec(EnvWaitLong, config.FmtDur(worker.DefaultWaitLong), "Longest wait a task sleeps through in memory; longer waits go back to Redis.", config.DurationVar(&w.WaitLong)),
		config.NewSpec(EnvQueues, defaultQueueWeights(), "Queues to serve as NAME=PRIORITY pairs; names use a-z, 0-9, _ and -.",
			queueMapVar(&w.Queues)),
		config.NewSpec(EnvStrictPriority, "false", "Empty higher-priority queues first instead of weighting them.",
			config.BoolVar(&w.StrictPriority)),
		config.NewSpec(EnvShutdownTimeout, config.FmtDur(broker.DefaultShutdownTimeout), "Time running tasks get to finish on shutdown.", config.DurationVar(&w.ShutdownTimeout)),
		config.NewSpec(EnvBackoffBase, config.FmtDur(worker.DefaultBackoffBase), "Longest first wait after a 5xx or transport error; doubles per retry.",
			config.DurationVar(&w.BackoffBase)),
		config.NewSpec(EnvBackoffCap, config.FmtDur(worker.DefaultBackoffCap), "Upper bound of any retry wait.", config.DurationVar(&w.BackoffCap)),
		config.NewSpec(EnvSentRetention, config.FmtDur(worker.DefaultSentRetention), `How long the progress record of a message with parts still to send is kept, so a retry does not send a part twice; a delivered message's record is kept at most an hour (until no redelivery can come).`,
			config.DurationVar(&w.SentRetention)),
		config.NewSpec(EnvLeaseRecovery, config.FmtDur(broker.DefaultLeaseRecoveryAfter), "Hand a task to another worker when its lease went this long without extension (crashed worker); -1s leaves it to asynq (60-90s).",
			config.DurationVar(&w.LeaseRecoveryAfter)),
		listen,
		config.NewSpec(EnvLimitBot, windowsOf(ratelimit.DefaultBot).String(), `Sends of the whole bot: windows "N/span" separated by commas, each allowing N sends in any span `+
			`(s, m, h or a Go duration such as 6s or 100ms); "off" disables.`,
			windowsVar(&w.Limits.Bot)),
		config.NewSpec(EnvLimitPrivate, windowsOf(ratelimit.DefaultPrivate).String(), "Sends to one private chat (windows, as for "+EnvLimitBot+").", windowsVar(&w.Limits.Private)),
		config.NewSpec(EnvLimitGroup, windowsOf(ratelimit.DefaultGroup).String(), "Sends to one group, supergroup or channel; all windows must hold (the default allows 1 in any second and 20 in any minute).",
			windowsVar(&w.Limits.Group)),
		config.NewSpec(EnvPriorityQueues, strings.Join(defaultPriorityQueues, ","), "Queues whose messages take the earliest bot-wide slot reserved for another chat's message (chat limits and the bot limit still hold).",
			queueNamesVar(&w.Limits.PriorityQueues)),
		config.NewSpec(EnvLimitPriority, defaultLimitPriority.String(), `How many priority-queue messages per window may take another message's reserved slot ("off" disables the priority).`,
			windowsVar(&w.Limits.Priority)),
		config.NewSpec(EnvLimitQueues, "", `Per-queue limits as NAME=LIMIT pairs, e.g. "default=20/s,low=5/s"; join one queue's windows with "+" ("default=20/s+100/m").`,
			queueLimitsVar(&w.Limits.Queues)),
		config.NewSpec(EnvLimitGuard, config.FmtDur(ratelimit.DefaultGuard), "Added to every window, so that sends N apart are at least the window plus this much apart by Redis' clock; absorbs dispatch and network jitter.",
			config.DurationVar(&w.Limits.Guard)),
		config.NewSpec(EnvPauseBotMax, config.FmtDur(ratelimit.DefaultBotPauseMax), `Longest bot-wide pause one 429 causes; Telegram's 429 does not say whether the chat or the whole bot is flooded. "off" or a negative value: a 429 pauses only its chat.`,
			config.PauseVar(&w.Limits.BotPauseMax)),
		config.NewSpec(EnvDigestGracePeriod, config.FmtDur(digest.DefaultGracePeriod), "A chat's coalescible messages are sent as a digest once none arrived for this long (whole seconds).",
			config.DurationVar(&w.Digest.GracePeriod)),
		config.NewSpec(EnvDigestMaxDelay, config.FmtDur(digest.DefaultMaxDelay), "A chat's oldest coalescible message waits at most about this long for its digest (whole seconds).",
			config.DurationVar(&w.Digest.MaxDelay)),
		config.NewSpec(EnvDigestMaxSize, strconv.Itoa(digest.DefaultMaxSize), "Most messages in one digest; a chat with this many waiting is flushed at once.",
			config.IntVar(&w.Digest.MaxSize)),
		config.NewSpec(EnvDigestMaxMessages, strconv.Itoa(digest.DefaultMaxMessages), "Most Telegram messages one digest is rendered into; items that do not fit go into the next digest.",
			config.IntVar(&w.Digest.MaxMessages)),
		config.NewSpec(EnvDigestReclaimAfter, config.FmtDur(digest.DefaultReclaimAfter), "Age at which a digest aggregation left behind by a crashed worker is given back to its chat's queue.",
			config.DurationVar(&w.Digest.ReclaimAfter)),
	), w.Updates.Specs()...)
}
