package settings

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/heartbeat"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/webhooks"
)

// Producer is the configuration of the producer binary, which accepts
// messages over HTTP (or its command line) and enqueues SendMessage tasks:
// the settings of the components it runs, each held in the component's
// own config.
type Producer struct {
	Redis redisconn.Config
	Log   config.Log

	// Bots names the bots messages and routes may name (HERALD_BOTS, shared
	// with the worker; default [keys.DefaultBot]). A message naming another
	// bot is refused; one naming none goes to the default bot, which must
	// then be listed. The producer never needs the bots' tokens.
	Bots []string

	// Server holds the HTTP server's settings: its listeners, the body
	// limit, the web UI and the metrics.
	Server producer.ServerConfig
	// Keyring names the API's tokens.
	Keyring httpapi.KeyringConfig
	// Enqueue is the enqueue policy. Its Queues are HERALD_QUEUES (shared
	// with the worker; priorities there are ignored; default
	// [jobs.DefaultQueues]); its DefaultQueue must be one of them. Its
	// Limits.Bots are filled from Bots by whoever builds the enqueuer.
	Enqueue jobs.EnqueueConfig
	// Routes says where the routing table comes from.
	Routes alerts.RoutesConfig
	// Webhooks holds the webhook receivers' secrets and body limit (the
	// smaller of Webhooks.MaxBodyBytes and Server.MaxBodyBytes applies, see
	// WebhookBodyLimit).
	Webhooks webhooks.Config
	// Telegram is the bots' webhook secret, as the workers set it; when
	// set, POST /telegram/<bot>/updates takes button presses.
	Telegram interact.ReceiverSettings
	// Ledger says how long settled messages' records are kept (shared with
	// the worker); the producer writes those of cancelled and silenced
	// messages.
	Ledger ledger.Config
	// Broadcast holds the broadcasts' limits, and the worker's bot and
	// private-chat limits that a broadcast's ETA follows.
	Broadcast broadcast.Config
	// Heartbeat holds the heartbeat checker's interval and cap.
	Heartbeat heartbeat.Config
	// Escalation holds how often escalation steps are looked for, and
	// how long a producer holds one.
	Escalation escalation.Settings
	// OnCall holds how often handoffs are looked for.
	OnCall roster.Settings
	// Feeds holds `producer feeds`' feed list and concurrency.
	Feeds feeds.Config
	// Callbacks holds the status callbacks' master key and allow-list,
	// shared with the workers: the producer checks a callback_url when a
	// sender names one and shows an endpoint's secret. The delivery's
	// settings are the workers' and stay unset here.
	Callbacks statushook.Config
	// Reserve is the share of Redis' memory kept for alerts, heartbeats and
	// the critical and default queues.
	Reserve quota.ReserveConfig
}

// WithDefaults returns p with every zero-valued setting replaced by its
// default, filled by the components that own them. Because zero counts as
// unset, Server.MonitoringPath must be cleared after calling it to disable
// the UI.
func (p Producer) WithDefaults() Producer {
	p.Redis = p.Redis.WithDefaults()
	p.Log = p.Log.WithDefaults()
	if p.Bots == nil {
		p.Bots = slices.Clone(defaultBots)
	}
	p.Server = p.Server.WithDefaults()
	p.Enqueue = p.Enqueue.WithDefaults()
	p.Webhooks = p.Webhooks.WithDefaults()
	p.Ledger = p.Ledger.WithDefaults()
	p.Broadcast = p.Broadcast.WithDefaults()
	p.Heartbeat = p.Heartbeat.WithDefaults()
	p.Escalation = p.Escalation.WithDefaults()
	p.OnCall = p.OnCall.WithDefaults()
	p.Feeds = p.Feeds.WithDefaults()
	p.Reserve = p.Reserve.WithDefaults()
	return p
}

// Validate reports every problem at once: each component's (its Check) and
// the rules across them.
func (p Producer) Validate() error {
	var pr config.Problems
	p.Redis.Check(&pr)
	p.Log.Validate(&pr)
	validateBots(&pr, p.Bots)
	if bots := p.BotNames(); len(bots) > 0 && p.Routes.File == "" && p.Routes.DefaultChat != "" && !slices.Contains(bots, keys.DefaultBot) {
		pr.Add(alerts.EnvDefaultChat, "sends every alert as the bot %q, which %s (%s) does not list; add %q there, "+
			"or set %s to a routing file whose routes name their bot (bot: %s)",
			keys.DefaultBot, EnvBots, botList(bots), keys.DefaultBot, alerts.EnvRoutesFile, bots[0])
	}
	p.Server.Check(&pr)
	p.Keyring.Check(&pr)
	p.Webhooks.Check(&pr)
	p.Telegram.Check(&pr)
	p.Heartbeat.Check(&pr)
	p.Escalation.Check(&pr)
	p.OnCall.Check(&pr)
	p.Feeds.Check(&pr)
	p.Routes.Check(&pr)
	p.validateQueues(&pr)
	p.Enqueue.Check(&pr)
	p.Ledger.Check(&pr)
	p.Broadcast.Check(&pr)
	p.Reserve.Check(&pr)
	p.Callbacks.CheckShared(&pr)
	if slices.Contains(p.Enqueue.Queues, statushook.Queue) {
		pr.Add(EnvQueues, "names the queue %q, which the status callbacks use; give your queue another name", statushook.Queue)
	}
	return pr.Err()
}

// ValidateServe adds the checks that only serving the API needs (the
// `send` command line writes to Redis directly and needs no API token).
func (p Producer) ValidateServe() error {
	var pr config.Problems
	p.Keyring.CheckServe(&pr)
	return pr.Err()
}

// validateQueues checks the queue list and that the default queue is on
// it.
func (p Producer) validateQueues(pr *config.Problems) {
	queues := p.Enqueue.Queues
	if len(queues) == 0 {
		pr.Add(EnvQueues, "must name at least one queue, e.g. %q", defaultQueueWeights())
	}
	for i, name := range queues {
		if !validQueueName(name) {
			pr.Add(EnvQueues, "has queue name %q; names may only use a-z, 0-9, _ and -", name)
		}
		if slices.Index(queues, name) != i {
			pr.Add(EnvQueues, "lists queue %q twice; keep one entry per queue", name)
		}
	}
	if len(queues) > 0 && !slices.Contains(queues, p.Enqueue.DefaultQueue) {
		pr.Add(jobs.EnvDefaultQueue, "is %q, which is not in %s (%s); pick one of those or add it there",
			p.Enqueue.DefaultQueue, EnvQueues, strings.Join(queues, ", "))
	}
}

// BotNames lists the bots messages and routes may name, in HERALD_BOTS
// order ([keys.DefaultBot] when Bots is unset): the known bots of
// jobs.Limits.
func (p Producer) BotNames() []string { return botNames(p.Bots) }

// WebhookBodyLimit is the webhook body limit in force: the smaller of
// Webhooks.MaxBodyBytes and Server.MaxBodyBytes.
func (p Producer) WebhookBodyLimit() int64 {
	return min(p.Webhooks.MaxBodyBytes, p.Server.MaxBodyBytes)
}

// EnqueueConfig is the enqueue policy with the bots messages may name.
func (p Producer) EnqueueConfig() jobs.EnqueueConfig {
	c := p.Enqueue
	c.Limits.Bots = p.BotNames()
	return c
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

// producerSpecs binds every producer setting to p, each component's
// through its Specs, in documentation order.
func producerSpecs(p *Producer) []config.Spec {
	specs := commonSpecs(&p.Redis, &p.Log, &p.Bots)
	specs = append(specs, p.Server.ListenSpec())
	specs = append(specs, p.Keyring.AuthSpecs()...)
	specs = append(specs, p.Enqueue.DefaultQueueSpec(EnvQueues),
		queuesSpec(queueNamesVar(&p.Enqueue.Queues)))
	specs = append(specs, p.Enqueue.PolicySpecs()...)
	specs = append(specs, p.Server.UISpecs()...)
	specs = append(specs, p.Keyring.AdminSpecs()...)
	specs = append(specs, p.Routes.Specs()...)
	specs = append(specs, p.Webhooks.SecretSpecs()...)
	specs = append(specs, p.Telegram.Specs()...)
	specs = append(specs, p.Webhooks.BodySpec(producer.EnvMaxBodyBytes))
	specs = append(specs, p.Ledger.Specs()...)
	specs = append(specs, p.Broadcast.Specs()...)
	specs = append(specs, p.Reserve.Specs()...)
	specs = append(specs, p.Heartbeat.Specs()...)
	specs = append(specs, p.Escalation.Specs()...)
	specs = append(specs, p.OnCall.Specs()...)
	specs = append(specs, p.Server.MetricsSpecs()...)
	specs = append(specs, p.Feeds.Specs()...)
	return append(specs, p.Callbacks.SharedSpecs()...)
}
