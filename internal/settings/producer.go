package settings

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/heartbeat"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/webhooks"
)

// Producer environment variables (HERALD_QUEUES is shared with the worker).
const (
	EnvListen             = "HERALD_LISTEN"
	EnvAPIToken           = "HERALD_API_TOKEN"
	EnvAPITokenFile       = "HERALD_API_TOKEN_FILE"
	EnvAuthDisabled       = "HERALD_AUTH_DISABLED"
	EnvTokensFile         = "HERALD_TOKENS_FILE"
	EnvDefaultQueue       = "HERALD_DEFAULT_QUEUE"
	EnvMaxRetry           = "HERALD_MAX_RETRY"
	EnvTaskTimeout        = "HERALD_TASK_TIMEOUT"
	EnvIdempotencyWindow  = "HERALD_IDEMPOTENCY_WINDOW"
	EnvMaxTextLen         = "HERALD_MAX_TEXT_LEN"
	EnvMaxBodyBytes       = "HERALD_MAX_BODY_BYTES"
	EnvMonitoringPath     = "HERALD_MONITORING_PATH"
	EnvMonitoringReadOnly = "HERALD_MONITORING_READONLY"
	EnvRoutesFile         = "HERALD_ROUTES_FILE"
	EnvAlertsDefaultChat  = "HERALD_ALERTS_DEFAULT_CHAT"
	EnvGitHubSecret       = "HERALD_GITHUB_WEBHOOK_SECRET"
	EnvGitHubSecretFile   = "HERALD_GITHUB_WEBHOOK_SECRET_FILE"
	EnvSentrySecret       = "HERALD_SENTRY_CLIENT_SECRET"
	EnvSentrySecretFile   = "HERALD_SENTRY_CLIENT_SECRET_FILE"
	EnvGrafanaSecret      = "HERALD_GRAFANA_WEBHOOK_SECRET"
	EnvGrafanaSecretFile  = "HERALD_GRAFANA_WEBHOOK_SECRET_FILE"
	EnvGrafanaTimestamp   = "HERALD_GRAFANA_TIMESTAMP_HEADER"
	EnvHeartbeatCheck     = "HERALD_HEARTBEAT_CHECK_INTERVAL"
	EnvFeedsFile          = "HERALD_FEEDS_FILE"
	EnvFeedsConcurrency   = "HERALD_FEEDS_CONCURRENCY"
	EnvAdminToken         = "HERALD_ADMIN_TOKEN"
	EnvAdminTokenFile     = "HERALD_ADMIN_TOKEN_FILE"
	EnvWebhookMaxBody     = "HERALD_WEBHOOK_MAX_BODY_BYTES"
	EnvMetricsListen      = "HERALD_METRICS_LISTEN"
	EnvMetricsToken       = "HERALD_METRICS_TOKEN"
	EnvMetricsTokenFile   = "HERALD_METRICS_TOKEN_FILE"
	EnvMetricsCache       = "HERALD_METRICS_CACHE"
	EnvMaxHeartbeats      = "HERALD_MAX_HEARTBEATS"
)

// The producer's own defaults: the settings of the binary itself (its
// listeners, the web UI and the metrics cache) that no component owns. The
// enqueue policy's defaults are jobs', the heartbeat, webhook and feed
// figures their packages', and the settings fill and document theirs from
// those.
const (
	DefaultListen         = ":8080"
	DefaultMaxBodyBytes   = 1 << 20
	DefaultMonitoringPath = "/monitoring"
	DefaultMetricsCache   = 5 * time.Second
)

// Bounds of the producer's own settings.
const (
	// minBodyBytes is the smallest request body limit accepted.
	minBodyBytes = 1 << 10
	// maxMetricsCache is the longest HERALD_METRICS_CACHE accepted.
	maxMetricsCache = 5 * time.Minute
	// minHeartbeatCheck is the shortest HERALD_HEARTBEAT_CHECK_INTERVAL
	// accepted: the settings' own floor, stricter than
	// heartbeat.MinCheckInterval, since every producer runs a check script
	// this often.
	minHeartbeatCheck = 100 * time.Millisecond
)

// reservedPaths are the API's own paths, which the web UI may not take.
var reservedPaths = []string{"/v1", "/livez", "/readyz", "/metrics"}

// Producer is the configuration of the producer binary, which accepts
// messages over HTTP (or its command line) and enqueues SendMessage tasks.
type Producer struct {
	Redis redisconn.Config
	Log   config.Log

	// Bots names the bots messages and routes may name (HERALD_BOTS, shared
	// with the worker; default [keys.DefaultBot]). A message naming another
	// bot is refused; one naming none goes to the default bot, which must
	// then be listed. The producer never needs the bots' tokens.
	Bots []string

	// Listen is the HTTP API address (HERALD_LISTEN, default [DefaultListen]).
	Listen string
	// APIToken is the bearer token clients must present (HERALD_API_TOKEN).
	APIToken string
	// APITokenFile is a file holding the API token, trimmed
	// (HERALD_API_TOKEN_FILE); it excludes APIToken.
	APITokenFile string
	// TokensFile is a YAML file of named tokens, each with its scopes
	// (HERALD_TOKENS_FILE; format in docs/SECURITY.md), beside or instead
	// of APIToken (named "api", scope send) and AdminToken (named "admin",
	// every scope).
	TokensFile string
	// AuthDisabled turns authentication off, for local use only
	// (HERALD_AUTH_DISABLED). When false a token is required.
	AuthDisabled bool
	// DefaultQueue receives messages that name no queue
	// (HERALD_DEFAULT_QUEUE, default [jobs.QueueDefault]); it must be one of
	// Queues.
	DefaultQueue string
	// Queues are the queue names clients may use (HERALD_QUEUES, shared with
	// the worker; priorities there are ignored; default [jobs.DefaultQueues]).
	Queues []string
	// MaxRetry is how often a task is retried before it is archived
	// (HERALD_MAX_RETRY, default [jobs.DefaultMaxRetry]).
	MaxRetry int
	// TaskTimeout bounds one processing attempt (HERALD_TASK_TIMEOUT,
	// default [jobs.DefaultTaskTimeout]).
	TaskTimeout time.Duration
	// IdempotencyWindow is how long an idempotency key blocks a duplicate
	// (HERALD_IDEMPOTENCY_WINDOW, default [jobs.DefaultIdempotencyWindow]).
	IdempotencyWindow time.Duration
	// MaxTextLen is the longest accepted text in UTF-16 code units
	// (HERALD_MAX_TEXT_LEN, default [jobs.DefaultMaxTextLen]); the worker
	// splits long texts into messages of Telegram's 4096 units.
	MaxTextLen int
	// MaxBodyBytes bounds an HTTP request body (HERALD_MAX_BODY_BYTES,
	// default [DefaultMaxBodyBytes]).
	MaxBodyBytes int64
	// MonitoringPath is where the Asynq web UI is mounted
	// (HERALD_MONITORING_PATH, default [DefaultMonitoringPath]); "" disables
	// it ("off" in the environment).
	MonitoringPath string
	// MonitoringReadOnly hides the UI's mutating actions
	// (HERALD_MONITORING_READONLY).
	MonitoringReadOnly bool
	// RoutesFile is the YAML routing file for alerts, webhooks, heartbeats
	// and feeds (HERALD_ROUTES_FILE); reloaded on SIGHUP. Empty means one
	// default route to AlertsDefaultChat.
	RoutesFile string
	// AlertsDefaultChat receives every alert when no routing file is set
	// (HERALD_ALERTS_DEFAULT_CHAT).
	AlertsDefaultChat string
	// GitHubSecret verifies X-Hub-Signature-256 on GitHub webhooks
	// (HERALD_GITHUB_WEBHOOK_SECRET or _FILE); unset disables the endpoint.
	GitHubSecret, GitHubSecretFile string
	// TelegramSecret is the secret token of the bots' webhooks, as the
	// workers set it (HERALD_TELEGRAM_WEBHOOK_SECRET or _FILE); when set,
	// POST /telegram/<bot>/updates takes button presses.
	TelegramSecret, TelegramSecretFile string
	// SentrySecret is the Sentry integration's client secret, which signs
	// Sentry-Hook-Signature (HERALD_SENTRY_CLIENT_SECRET or _FILE); unset
	// disables the endpoint.
	SentrySecret, SentrySecretFile string
	// GrafanaSecret, when set, requires Grafana's HMAC signature on the
	// Grafana webhook in addition to the API token
	// (HERALD_GRAFANA_WEBHOOK_SECRET or _FILE).
	GrafanaSecret, GrafanaSecretFile string
	// GrafanaTimestampHeader names the contact point's timestamp header when
	// one is configured in Grafana: the signature then covers
	// "<timestamp>:<body>" and stale timestamps are refused
	// (HERALD_GRAFANA_TIMESTAMP_HEADER).
	GrafanaTimestampHeader string
	// HeartbeatCheckInterval is how often overdue heartbeats are looked for
	// (HERALD_HEARTBEAT_CHECK_INTERVAL, default
	// [heartbeat.DefaultCheckInterval]).
	HeartbeatCheckInterval time.Duration
	// FeedsFile is the feed list `producer feeds` polls (HERALD_FEEDS_FILE).
	FeedsFile string
	// FeedsConcurrency bounds simultaneous feed fetches
	// (HERALD_FEEDS_CONCURRENCY, default [feeds.DefaultConcurrency]).
	FeedsConcurrency int
	// AdminToken is the token with every scope, named "admin"
	// (HERALD_ADMIN_TOKEN or HERALD_ADMIN_TOKEN_FILE): silences and the web
	// UI's changes (pause queues, run, archive or delete tasks) among them.
	// The API token only sends and reads the UI.
	AdminToken, AdminTokenFile string
	// WebhookMaxBodyBytes bounds a webhook body
	// (HERALD_WEBHOOK_MAX_BODY_BYTES, default [webhooks.DefaultMaxBodyBytes];
	// MaxBodyBytes when that is smaller, see WebhookBodyLimit); signed
	// webhooks are read before they can be authenticated, so their limit
	// stays well below the API's.
	WebhookMaxBodyBytes int64
	// MetricsListen, when set, serves /metrics on a listener of its own
	// instead of the API's (HERALD_METRICS_LISTEN).
	MetricsListen string
	// MetricsToken, when set, is required as a bearer token on /metrics
	// (HERALD_METRICS_TOKEN or HERALD_METRICS_TOKEN_FILE).
	MetricsToken, MetricsTokenFile string
	// MetricsCache is how long asynq's queue statistics are reused between
	// scrapes (HERALD_METRICS_CACHE, default [DefaultMetricsCache]); it
	// bounds their Redis cost whatever the scrape rate. 0 queries Redis at
	// every scrape.
	MetricsCache time.Duration
	// MaxHeartbeats bounds the number of heartbeats; a ping creating one
	// more is refused (HERALD_MAX_HEARTBEATS, default
	// [heartbeat.DefaultMaxHeartbeats]).
	MaxHeartbeats int
}

// WithDefaults returns p with every zero-valued setting replaced by its
// default. Because zero counts as unset, MonitoringPath must be cleared
// after calling it to disable the UI.
func (p Producer) WithDefaults() Producer {
	p.Redis = p.Redis.WithDefaults()
	p.Log = p.Log.WithDefaults()
	if p.Bots == nil {
		p.Bots = slices.Clone(defaultBots)
	}
	if p.Listen == "" {
		p.Listen = DefaultListen
	}
	if p.DefaultQueue == "" {
		p.DefaultQueue = jobs.QueueDefault
	}
	if p.Queues == nil {
		p.Queues = jobs.DefaultQueues()
	}
	if p.MaxRetry == 0 {
		p.MaxRetry = jobs.DefaultMaxRetry
	}
	if p.TaskTimeout == 0 {
		p.TaskTimeout = jobs.DefaultTaskTimeout
	}
	if p.IdempotencyWindow == 0 {
		p.IdempotencyWindow = jobs.DefaultIdempotencyWindow
	}
	if p.MaxTextLen == 0 {
		p.MaxTextLen = jobs.DefaultMaxTextLen
	}
	if p.MaxBodyBytes == 0 {
		p.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if p.MonitoringPath == "" {
		p.MonitoringPath = DefaultMonitoringPath
	}
	if p.HeartbeatCheckInterval == 0 {
		p.HeartbeatCheckInterval = heartbeat.DefaultCheckInterval
	}
	if p.FeedsConcurrency == 0 {
		p.FeedsConcurrency = feeds.DefaultConcurrency
	}
	if p.WebhookMaxBodyBytes == 0 {
		p.WebhookMaxBodyBytes = webhooks.DefaultMaxBodyBytes
	}
	if p.MetricsCache == 0 {
		p.MetricsCache = DefaultMetricsCache
	}
	if p.MaxHeartbeats == 0 {
		p.MaxHeartbeats = heartbeat.DefaultMaxHeartbeats
	}
	return p
}

// Validate reports every problem at once.
func (p Producer) Validate() error {
	var pr config.Problems
	p.Redis.Check(&pr)
	p.Log.Validate(&pr)
	validateBots(&pr, p.Bots)
	if bots := p.BotNames(); len(bots) > 0 && p.RoutesFile == "" && p.AlertsDefaultChat != "" && !slices.Contains(bots, keys.DefaultBot) {
		pr.Add(EnvAlertsDefaultChat, "sends every alert as the bot %q, which %s (%s) does not list; add %q there, "+
			"or set %s to a routing file whose routes name their bot (bot: %s)",
			keys.DefaultBot, EnvBots, botList(bots), keys.DefaultBot, EnvRoutesFile, bots[0])
	}
	if p.Listen == "" {
		pr.Add(EnvListen, "must be host:port such as %q, got an empty value", DefaultListen)
	} else {
		config.ValidateListen(&pr, EnvListen, p.Listen, DefaultListen)
	}
	config.ValidateSecretPair(&pr, p.APIToken, p.APITokenFile, EnvAPIToken, EnvAPITokenFile)
	config.ValidateSecretPair(&pr, p.GitHubSecret, p.GitHubSecretFile, EnvGitHubSecret, EnvGitHubSecretFile)
	config.ValidateSecretPair(&pr, p.TelegramSecret, p.TelegramSecretFile, EnvTelegramWebhookSecret, EnvTelegramWebhookSecretFile)
	validateWebhookSecret(&pr, p.TelegramSecret, p.TelegramSecretFile, false)
	config.ValidateSecretPair(&pr, p.SentrySecret, p.SentrySecretFile, EnvSentrySecret, EnvSentrySecretFile)
	config.ValidateSecretPair(&pr, p.GrafanaSecret, p.GrafanaSecretFile, EnvGrafanaSecret, EnvGrafanaSecretFile)
	config.ValidateSecretPair(&pr, p.AdminToken, p.AdminTokenFile, EnvAdminToken, EnvAdminTokenFile)
	config.ValidateSecretPair(&pr, p.MetricsToken, p.MetricsTokenFile, EnvMetricsToken, EnvMetricsTokenFile)
	if p.AdminToken != "" && p.AdminToken == p.APIToken {
		pr.Add(EnvAdminToken, "must differ from %s: every sender holds the API token; generate a second secret for the web UI's admin", EnvAPIToken)
	}
	if p.MetricsListen != "" {
		config.ValidateListen(&pr, EnvMetricsListen, p.MetricsListen, ":9090")
		if p.MetricsListen == p.Listen {
			pr.Add(EnvMetricsListen, "is the API's address %q; pick another port, or leave it empty to serve /metrics on the API", p.Listen)
		}
	}
	if p.MetricsCache < 0 || p.MetricsCache > maxMetricsCache {
		pr.Add(EnvMetricsCache, "must be between 0 (no cache) and %s (e.g. %s), got %s",
			config.FmtDur(maxMetricsCache), config.FmtDur(DefaultMetricsCache), config.FmtDur(p.MetricsCache))
	}
	if p.MaxHeartbeats < 1 {
		pr.Add(EnvMaxHeartbeats, "must be >= 1 (e.g. %d), got %d", heartbeat.DefaultMaxHeartbeats, p.MaxHeartbeats)
	}
	bodyLimit(&pr, EnvWebhookMaxBody, p.WebhookMaxBodyBytes, webhooks.DefaultMaxBodyBytes)
	if p.HeartbeatCheckInterval < minHeartbeatCheck {
		pr.Add(EnvHeartbeatCheck, "must be at least %s (e.g. %s), got %s",
			config.FmtDur(minHeartbeatCheck), config.FmtDur(heartbeat.DefaultCheckInterval), config.FmtDur(p.HeartbeatCheckInterval))
	}
	if p.FeedsConcurrency < 1 {
		pr.Add(EnvFeedsConcurrency, "must be >= 1, got %d", p.FeedsConcurrency)
	}
	p.validateQueues(&pr)
	if p.MaxRetry < 0 {
		pr.Add(EnvMaxRetry, "must be >= 0, got %d", p.MaxRetry)
	}
	pr.AtLeastSecond(EnvTaskTimeout, p.TaskTimeout, jobs.DefaultTaskTimeout)
	pr.AtLeastSecond(EnvIdempotencyWindow, p.IdempotencyWindow, jobs.DefaultIdempotencyWindow)
	if p.MaxTextLen < 1 {
		pr.Add(EnvMaxTextLen, "must be >= 1, got %d", p.MaxTextLen)
	}
	bodyLimit(&pr, EnvMaxBodyBytes, p.MaxBodyBytes, DefaultMaxBodyBytes)
	if mp := p.MonitoringPath; mp != "" {
		if !strings.HasPrefix(mp, "/") || mp == "/" || strings.HasSuffix(mp, "/") || strings.ContainsAny(mp, "?# \t") {
			pr.Add(EnvMonitoringPath, "must be a path such as %q (leading slash, no trailing slash), or \"off\", got %q",
				DefaultMonitoringPath, mp)
		}
		for _, r := range reservedPaths {
			if mp == r || strings.HasPrefix(mp, r+"/") || strings.HasPrefix(r, mp+"/") {
				pr.Add(EnvMonitoringPath, "is %q, which overlaps the API's %s; pick a path of its own such as %q",
					mp, r, DefaultMonitoringPath)
			}
		}
	}
	return pr.Err()
}

// ValidateServe adds the checks that only serving the API needs (the
// `send` command line writes to Redis directly and needs no API token).
func (p Producer) ValidateServe() error {
	var pr config.Problems
	if !p.AuthDisabled && p.APIToken == "" && p.APITokenFile == "" && p.TokensFile == "" {
		pr.Add(EnvAPIToken, "is required: set %s (or %s, or a tokens file in %s), or %s=true for local use",
			EnvAPIToken, EnvAPITokenFile, EnvTokensFile, EnvAuthDisabled)
	}
	return pr.Err()
}

// validateQueues checks the queue list and that DefaultQueue is on it.
func (p Producer) validateQueues(pr *config.Problems) {
	if len(p.Queues) == 0 {
		pr.Add(EnvQueues, "must name at least one queue, e.g. %q", defaultQueueWeights())
	}
	for i, name := range p.Queues {
		if !validQueueName(name) {
			pr.Add(EnvQueues, "has queue name %q; names may only use a-z, 0-9, _ and -", name)
		}
		if slices.Index(p.Queues, name) != i {
			pr.Add(EnvQueues, "lists queue %q twice; keep one entry per queue", name)
		}
	}
	if len(p.Queues) > 0 && !slices.Contains(p.Queues, p.DefaultQueue) {
		pr.Add(EnvDefaultQueue, "is %q, which is not in %s (%s); pick one of those or add it there",
			p.DefaultQueue, EnvQueues, strings.Join(p.Queues, ", "))
	}
}

// BotNames lists the bots messages and routes may name, in HERALD_BOTS
// order ([keys.DefaultBot] when Bots is unset): the known bots of
// jobs.Limits.
func (p Producer) BotNames() []string { return botNames(p.Bots) }

// Token returns the API token, reading APITokenFile when it is set. It
// returns "" and no error when neither is set.
func (p Producer) Token() (string, error) {
	return config.SecretPair(p.APIToken, p.APITokenFile, EnvAPIToken, EnvAPITokenFile)
}

// Admin returns the web UI's admin token, reading AdminTokenFile when set;
// "" when neither is set. A token equal to the API token is an error.
func (p Producer) Admin() (string, error) {
	admin, err := config.SecretPair(p.AdminToken, p.AdminTokenFile, EnvAdminToken, EnvAdminTokenFile)
	if err != nil || admin == "" {
		return admin, err
	}
	if api, _ := p.Token(); api == admin {
		return "", config.FieldErr(EnvAdminToken, "must differ from %s: every sender holds the API token; generate a second secret for the web UI's admin", config.Ref(EnvAPIToken))
	}
	return admin, nil
}

// WebhookBodyLimit is the webhook body limit in force: the smaller of
// WebhookMaxBodyBytes and MaxBodyBytes.
func (p Producer) WebhookBodyLimit() int64 {
	return min(p.WebhookMaxBodyBytes, p.MaxBodyBytes)
}

// Metrics returns the /metrics bearer token, reading MetricsTokenFile when
// set; "" when neither is set.
func (p Producer) Metrics() (string, error) {
	return config.SecretPair(p.MetricsToken, p.MetricsTokenFile, EnvMetricsToken, EnvMetricsTokenFile)
}

// WebhookSecrets returns the GitHub, Sentry and Grafana webhook secrets,
// reading their files when set; unset ones are "".
func (p Producer) WebhookSecrets() (github, sentry, grafana string, err error) {
	if github, err = config.SecretPair(p.GitHubSecret, p.GitHubSecretFile, EnvGitHubSecret, EnvGitHubSecretFile); err != nil {
		return "", "", "", err
	}
	if sentry, err = config.SecretPair(p.SentrySecret, p.SentrySecretFile, EnvSentrySecret, EnvSentrySecretFile); err != nil {
		return "", "", "", err
	}
	if grafana, err = config.SecretPair(p.GrafanaSecret, p.GrafanaSecretFile, EnvGrafanaSecret, EnvGrafanaSecretFile); err != nil {
		return "", "", "", err
	}
	return github, sentry, grafana, nil
}

// LogValue renders every setting with secrets masked, so a Producer can be
// logged with slog.
func (p Producer) LogValue() slog.Value {
	return slog.GroupValue(config.LogAttrs(producerSpecs(&p))...)
}

// String renders every setting as ENV=value with secrets masked.
func (p Producer) String() string {
	return config.Render(producerSpecs(&p))
}

// ProducerSettings describes every producer setting in documentation order.
func ProducerSettings() []config.Setting {
	var p Producer
	return config.Describe(producerSpecs(&p))
}

// ProducerUsage writes the producer's flag help to out.
func ProducerUsage(out io.Writer) error {
	return config.Usage(out, ProducerSettings())
}

// LoadProducer resolves the producer configuration: defaults, then the
// environment read through getenv (nil means none), then flags in args. It
// returns every problem at once, and flag.ErrHelp for -h. Positional
// arguments are an error; use LoadProducerArgs for subcommands.
func LoadProducer(args []string, getenv func(string) string) (Producer, error) {
	p, rest, err := LoadProducerArgs(args, getenv)
	if err != nil {
		return Producer{}, err
	}
	if len(rest) > 0 {
		return Producer{}, fmt.Errorf("config: unexpected argument %q; use LoadProducerArgs to accept a subcommand", rest[0])
	}
	return p, nil
}

// LoadProducerArgs is LoadProducer that stops at the first non-flag argument
// and returns it and everything after it, so that
// "producer -redis-url=... send --chat 1 text" leaves "send --chat 1 text"
// for the caller.
func LoadProducerArgs(args []string, getenv func(string) string) (Producer, []string, error) {
	p := Producer{}.WithDefaults()
	rest, err := config.Load("producer", producerSpecs(&p), args, getenv)
	if err != nil {
		return Producer{}, nil, err
	}
	if err := p.Validate(); err != nil {
		return Producer{}, nil, err
	}
	return p, rest, nil
}

// producerSpecs binds every producer setting to p.
func producerSpecs(p *Producer) []config.Spec {
	specs := commonSpecs(&p.Redis, &p.Log, &p.Bots)
	return append(specs,
		config.NewSpec(EnvListen, DefaultListen, "Address of the HTTP API.", config.StringVar(&p.Listen)),
		config.SecretSpec(EnvAPIToken, `Bearer token of senders: the token named "api", with the send scope. Prefer the _FILE variant.`, config.StringVar(&p.APIToken)),
		config.NewSpec(EnvAPITokenFile, "", "File holding the API token (content trimmed); excludes "+EnvAPIToken+".",
			config.StringVar(&p.APITokenFile)),
		config.NewSpec(EnvTokensFile, "", "YAML file of named tokens with their scopes (send, operate, admin); see docs/SECURITY.md.",
			config.StringVar(&p.TokensFile)),
		config.NewSpec(EnvAuthDisabled, "false", "Accept requests without a token; for local use only.", config.BoolVar(&p.AuthDisabled)),
		config.NewSpec(EnvDefaultQueue, jobs.QueueDefault, "Queue for messages that name none; must be listed in "+EnvQueues+".",
			config.StringVar(&p.DefaultQueue)),
		config.NewSpec(EnvQueues, strings.Join(jobs.DefaultQueues(), ","), "Queues clients may use; same variable as the worker's, priorities ignored.",
			queueNamesVar(&p.Queues)),
		config.NewSpec(EnvMaxRetry, strconv.Itoa(jobs.DefaultMaxRetry), "Retries of a task before it is archived.", config.IntVar(&p.MaxRetry)),
		config.NewSpec(EnvTaskTimeout, config.FmtDur(jobs.DefaultTaskTimeout), "Timeout of one processing attempt of a task.", config.DurationVar(&p.TaskTimeout)),
		config.NewSpec(EnvIdempotencyWindow, config.FmtDur(jobs.DefaultIdempotencyWindow), "How long an idempotency key rejects duplicates.", config.DurationVar(&p.IdempotencyWindow)),
		config.NewSpec(EnvMaxTextLen, strconv.Itoa(jobs.DefaultMaxTextLen), "Longest accepted text in UTF-16 units; the worker splits it into 4096-unit messages.",
			config.IntVar(&p.MaxTextLen)),
		config.NewSpec(EnvMaxBodyBytes, config.FormatBytes(DefaultMaxBodyBytes), "Largest accepted HTTP request body (bytes, KiB, MiB).", config.BytesVar(&p.MaxBodyBytes)),
		config.NewSpec(EnvMonitoringPath, DefaultMonitoringPath, `Path of the Asynq web UI; "off" disables it.`,
			config.OptStringVar(&p.MonitoringPath)),
		config.NewSpec(EnvMonitoringReadOnly, "false", "Serve the web UI without its mutating actions, even to the admin token.",
			config.BoolVar(&p.MonitoringReadOnly)),
		config.SecretSpec(EnvAdminToken, `Token with every scope, named "admin": silences, and the web UI's changes (pause queues, run, archive, delete tasks). `+
			"The API token only sends and reads the UI. Prefer the _FILE variant.",
			config.StringVar(&p.AdminToken)),
		config.NewSpec(EnvAdminTokenFile, "", "File holding the admin token (content trimmed); excludes "+EnvAdminToken+".",
			config.StringVar(&p.AdminTokenFile)),
		config.NewSpec(EnvRoutesFile, "", "YAML routing file for alerts, webhooks, heartbeats and feeds; reloaded on SIGHUP.",
			config.StringVar(&p.RoutesFile)),
		config.NewSpec(EnvAlertsDefaultChat, "", "Chat that receives every alert when no routing file is set.",
			config.StringVar(&p.AlertsDefaultChat)),
		config.SecretSpec(EnvGitHubSecret, "GitHub webhook secret (X-Hub-Signature-256); unset disables /v1/webhooks/github.",
			config.StringVar(&p.GitHubSecret)),
		config.NewSpec(EnvGitHubSecretFile, "", "File holding the GitHub webhook secret.", config.StringVar(&p.GitHubSecretFile)),
		config.SecretSpec(EnvSentrySecret, "Sentry integration client secret (Sentry-Hook-Signature); unset disables /v1/webhooks/sentry.",
			config.StringVar(&p.SentrySecret)),
		config.NewSpec(EnvSentrySecretFile, "", "File holding the Sentry client secret.", config.StringVar(&p.SentrySecretFile)),
		config.SecretSpec(EnvGrafanaSecret, "Grafana contact point HMAC secret; when set, Grafana webhooks must be signed.",
			config.StringVar(&p.GrafanaSecret)),
		config.NewSpec(EnvGrafanaSecretFile, "", "File holding the Grafana HMAC secret.", config.StringVar(&p.GrafanaSecretFile)),
		config.NewSpec(EnvGrafanaTimestamp, "", "Grafana's signature timestamp header, when the contact point sets one.",
			config.StringVar(&p.GrafanaTimestampHeader)),
		config.SecretSpec(EnvTelegramWebhookSecret, "Secret token of the bots' webhooks, as the workers set it; when set, POST /telegram/<bot>/updates takes button presses.",
			config.StringVar(&p.TelegramSecret)),
		config.NewSpec(EnvTelegramWebhookSecretFile, "", "File holding the webhook secret token.", config.StringVar(&p.TelegramSecretFile)),
		config.NewSpec(EnvWebhookMaxBody, config.FormatBytes(webhooks.DefaultMaxBodyBytes), "Largest accepted webhook body (the smaller of this and "+EnvMaxBodyBytes+" applies).",
			config.BytesVar(&p.WebhookMaxBodyBytes)),
		config.NewSpec(EnvHeartbeatCheck, config.FmtDur(heartbeat.DefaultCheckInterval), "How often each producer looks for overdue heartbeats.",
			config.DurationVar(&p.HeartbeatCheckInterval)),
		config.NewSpec(EnvMaxHeartbeats, strconv.Itoa(heartbeat.DefaultMaxHeartbeats), "Most heartbeats; a ping that would create one more is refused (409).",
			config.IntVar(&p.MaxHeartbeats)),
		config.NewSpec(EnvMetricsListen, "", "Address of a listener serving only /metrics; empty serves /metrics on the API's address.",
			config.StringVar(&p.MetricsListen)),
		config.SecretSpec(EnvMetricsToken, "Bearer token /metrics requires; unset serves it without authentication.",
			config.StringVar(&p.MetricsToken)),
		config.NewSpec(EnvMetricsTokenFile, "", "File holding the metrics token; excludes "+EnvMetricsToken+".",
			config.StringVar(&p.MetricsTokenFile)),
		config.NewSpec(EnvMetricsCache, config.FmtDur(DefaultMetricsCache), "How long asynq's queue statistics are reused between scrapes (bounds their Redis cost); 0 disables the cache.",
			config.DurationVar(&p.MetricsCache)),
		config.NewSpec(EnvFeedsFile, "", "Feed list polled by `producer feeds`.", config.StringVar(&p.FeedsFile)),
		config.NewSpec(EnvFeedsConcurrency, strconv.Itoa(feeds.DefaultConcurrency), "Feed fetches at once in `producer feeds`.", config.IntVar(&p.FeedsConcurrency)),
	)
}

// bodyLimit records a problem when a body limit is below minBodyBytes;
// example is the setting's default, as for positive.
func bodyLimit(p *config.Problems, env string, n, example int64) {
	if n < minBodyBytes {
		p.Add(env, "must be at least %s (e.g. %s), got %d", config.FormatBytes(minBodyBytes), config.FormatBytes(example), n)
	}
}
