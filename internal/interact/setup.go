package interact

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/internal/silences"
)

// WorkerConfig is what a worker process needs to take button presses and
// the changes of its bots' membership of chats.
type WorkerConfig struct {
	// Redis is the worker's client. Required.
	Redis redis.UniversalClient
	// Bots are the worker's Bot API clients, by name. Required.
	Bots map[string]bot
	// Queues are the queues the worker serves, highest priority first: the
	// update tasks and the edits go to the critical one, or the first when
	// there is none. Required.
	Queues []string
	// Durable is the worker's acknowledgement of writes (nil: none).
	Durable *durable.Acker
	// WebhookURL, when set, is the producer's public base URL: the worker
	// sets each bot's webhook there (with WebhookSecret) instead of
	// polling.
	WebhookURL, WebhookSecret string
	// Poller tunes the poller (its Redis, Bots, Tasks, Logger and Metrics
	// are filled in here).
	Poller pollerConfig
	// OnBlocked, when set, is told of each chat that a my_chat_member
	// update newly marked blocked (for the chat.blocked callback); an
	// error retries the update. Chats that a 403 marks are the send
	// path's to report.
	OnBlocked func(ctx context.Context, bot, chat string, b chats.Block) error
	// Registerer receives the metrics; nil: none.
	Registerer prometheus.Registerer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// component is a background part of a process, started and shut down with
// it (the poller, the registrar).
type component interface {
	Start(ctx context.Context) error
	Shutdown()
}

// workerSide is what a worker runs for the buttons: the handler of
// TypeUpdate tasks, and the component that receives the presses (a
// poller, or a registrar when webhooks are used).
type workerSide struct {
	Handler  *handler
	Receiver component
	Metrics  *metrics
}

// ForWorker assembles the worker's side: the edits of the messages go
// through a jobs.Enqueuer of its own (the same queues and limits as every
// message), the silences through a silences.Store on the worker's Redis,
// and an acknowledgement stops the alert's escalation (escalation.Store,
// whose metrics go to cfg.Registerer).
func ForWorker(cfg WorkerConfig) (*workerSide, error) {
	if cfg.Redis == nil || len(cfg.Bots) == 0 || len(cfg.Queues) == 0 {
		return nil, errors.New("interact: WorkerConfig.Redis, Bots and Queues are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	queues := cfg.Queues
	queue := pickQueue(queues, queues[0])
	metrics := newMetrics(cfg.Registerer)
	names := slices.Sorted(maps.Keys(cfg.Bots))
	edits := jobs.NewEnqueuer(cfg.Redis, jobs.EnqueueConfig{Queues: queues, DefaultQueue: queue,
		Limits: jobs.Limits{Bots: names}, Durable: cfg.Durable})
	store, err := silences.New(silences.Config{Redis: cfg.Redis, Items: edits, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	blocked := chats.NewStore(cfg.Redis, chats.WithMetrics(chats.NewMetrics(cfg.Registerer)))
	escalations := escalation.NewStore(cfg.Redis, escalation.NewMetrics(cfg.Registerer))
	h, err := newHandler(handlerConfig{Redis: cfg.Redis, Bots: cfg.Bots, Edits: edits, EditQueue: queue,
		Silences: store, Chats: blocked, OnBlocked: cfg.OnBlocked, Escalations: escalations, Commands: roster.NewCommands(cfg.Redis),
		Durable: cfg.Durable, Logger: cfg.Logger, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	side := &workerSide{Handler: h, Metrics: metrics}
	if cfg.WebhookURL != "" {
		side.Receiver, err = newRegistrar(registrarConfig{Bots: cfg.Bots, BaseURL: cfg.WebhookURL, Secret: cfg.WebhookSecret, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		return side, nil
	}
	tasks, err := newTasks(tasksConfig{Redis: cfg.Redis, Queue: queue, Durable: cfg.Durable, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	pc := cfg.Poller
	pc.Redis, pc.Bots, pc.Tasks, pc.Logger, pc.Metrics = cfg.Redis, cfg.Bots, tasks, cfg.Logger, metrics
	side.Receiver, err = newPoller(pc)
	if err != nil {
		return nil, err
	}
	return side, nil
}

// ProducerConfig is what a producer needs to serve the bots' webhooks.
type ProducerConfig struct {
	// Redis is the producer's client. Required.
	Redis redis.UniversalClient
	// Queues are the queues the producer may use; the updates go to the
	// critical one, else to DefaultQueue.
	Queues       []string
	DefaultQueue string
	// Secret is the webhooks' secret token; Bots the bots served.
	Secret string
	Bots   []string
	// MaxBodyBytes bounds a post (default defaultMaxUpdateBytes).
	MaxBodyBytes int64
	// Registerer receives the metrics; nil: none.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// ForProducer builds the webhook receiver that the producer serves at
// WebhookPattern.
func ForProducer(cfg ProducerConfig) (*receiver, error) {
	queue := cfg.DefaultQueue
	if queue == "" {
		queue = jobs.QueueDefault
	}
	tasks, err := newTasks(tasksConfig{Redis: cfg.Redis, Queue: pickQueue(cfg.Queues, queue), Metrics: newMetrics(cfg.Registerer)})
	if err != nil {
		return nil, err
	}
	return newReceiver(receiverConfig{Tasks: tasks, Secret: cfg.Secret, Bots: cfg.Bots, MaxBodyBytes: cfg.MaxBodyBytes, Logger: cfg.Logger})
}

// Mounts is the webhook receiver's route (ForProducer, at WebhookPattern),
// which checks Telegram's secret token itself; without a Secret there is
// no receiver and no route.
func Mounts(cfg ProducerConfig) ([]httpapi.Mount, error) {
	if cfg.Secret == "" {
		return nil, nil
	}
	recv, err := ForProducer(cfg)
	if err != nil {
		return nil, err
	}
	return []httpapi.Mount{{Pattern: WebhookPattern, Handler: recv, SelfAuth: true}}, nil
}
