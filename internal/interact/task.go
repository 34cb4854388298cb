package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// TypeUpdate is the task type of one Telegram update of one bot.
const TypeUpdate = "telegram:update"

// How an update reached Herald (Payload.Via, the via label).
const (
	ViaPoll    = "poll"
	ViaWebhook = "webhook"
)

// payloadVersion is the payload version this build writes; a worker
// archives a payload of a newer version rather than guess at it.
const payloadVersion = 1

// Payload is the JSON of a TypeUpdate task.
type Payload struct {
	V int `json:"v"`
	// Bot is the name of the bot that received the update.
	Bot string `json:"bot"`
	// Via is ViaPoll or ViaWebhook.
	Via string `json:"via"`
	// ReceivedAt is when Herald received the update: a press is answered
	// within seconds or not at all, and a failed answer is retried only
	// while it is recent.
	ReceivedAt time.Time       `json:"received_at"`
	Update     telegram.Update `json:"update"`
}

// decodePayload reads a TypeUpdate payload.
func decodePayload(b []byte) (Payload, error) {
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		return Payload{}, fmt.Errorf("interact: payload: %w", err)
	}
	if p.V > payloadVersion {
		return Payload{}, fmt.Errorf("interact: payload version %d is newer than this worker's %d", p.V, payloadVersion)
	}
	if !keys.ValidBotName(p.Bot) {
		return Payload{}, fmt.Errorf("interact: payload names no valid bot (%q)", p.Bot)
	}
	return p, nil
}

// Defaults of TasksConfig.
const (
	// DefaultTaskTimeout bounds one attempt at an update task.
	DefaultTaskTimeout = time.Minute
	// DefaultDedupWindow is how long a finished update task keeps its id,
	// so that the same update delivered again is not queued again.
	DefaultDedupWindow = time.Hour
)

// TasksConfig configures Tasks.
type TasksConfig struct {
	// Redis is where the tasks go. Required.
	Redis redis.UniversalClient
	// Queue takes the tasks; default jobs.QueueCritical (see PickQueue).
	Queue string
	// Durable, when set, is waited on after each enqueue (the poller moves
	// its offset only past updates the replicas hold). The producer leaves
	// it nil: its API waits for the request's writes itself.
	Durable *durable.Acker
	// Timeout and DedupWindow are the tasks' attempt timeout and
	// retention; defaults DefaultTaskTimeout and DefaultDedupWindow. (The
	// retry budget is the Handler's: HandlerConfig.MaxRetry.)
	Timeout     time.Duration
	DedupWindow time.Duration
	// Metrics count the updates; nil: unregistered ones.
	Metrics *Metrics
	// Now is the clock of ReceivedAt; default time.Now.
	Now func() time.Time
}

// withDefaults fills the zero fields.
func (c TasksConfig) withDefaults() TasksConfig {
	if c.Queue == "" {
		c.Queue = jobs.QueueCritical
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTaskTimeout
	}
	if c.DedupWindow == 0 {
		c.DedupWindow = DefaultDedupWindow
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Metrics = c.Metrics.orNew()
	return c
}

func (c TasksConfig) validate() error {
	var errs []error
	if c.Redis == nil {
		errs = append(errs, errors.New("interact: TasksConfig.Redis is required"))
	}
	if c.Timeout < 0 || c.DedupWindow < 0 {
		errs = append(errs, fmt.Errorf("interact: TasksConfig.Timeout (%v) and DedupWindow (%v) must not be negative", c.Timeout, c.DedupWindow))
	}
	return errors.Join(errs...)
}

// Tasks puts updates on the queue as TypeUpdate tasks.
type Tasks struct {
	cfg    TasksConfig
	client *asynq.Client
}

// NewTasks checks cfg and returns Tasks on its Redis client (shared, not
// closed by Tasks).
func NewTasks(cfg TasksConfig) (*Tasks, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Tasks{cfg: cfg, client: asynq.NewClientFromRedisClient(cfg.Redis)}, nil
}

// Queue is the queue the tasks go to.
func (t *Tasks) Queue() string { return t.cfg.Queue }

// taskID is the id of the task of bot's update: the same update gets the
// same id, and asynq refuses a second task with it while the first is
// queued, running or kept (DedupWindow).
func taskID(bot string, updateID int64) string {
	return "tgupdate-" + bot + "-" + strconv.FormatInt(updateID, 10)
}

// Enqueue queues u of bot, received via via. dup reports an update that
// was queued already (nothing new was stored). An error means the update
// is not stored: the caller must not confirm it to Telegram.
func (t *Tasks) Enqueue(ctx context.Context, bot, via string, u telegram.Update) (dup bool, err error) {
	body, err := json.Marshal(Payload{V: payloadVersion, Bot: bot, Via: via, ReceivedAt: t.cfg.Now().UTC(), Update: u})
	if err != nil {
		return false, err
	}
	_, err = t.client.EnqueueContext(ctx, asynq.NewTask(TypeUpdate, body),
		asynq.Queue(t.cfg.Queue),
		asynq.TaskID(taskID(bot, u.UpdateID)),
		// The handler keeps the retry budget (HandlerConfig.MaxRetry):
		// a press it has recorded is retried until it is done.
		asynq.MaxRetry(broker.RetryCeiling),
		asynq.Timeout(t.cfg.Timeout),
		asynq.Retention(t.cfg.DedupWindow))
	durable.Wrote(ctx, broker.PendingKey(t.cfg.Queue))
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		dup = true
	case err != nil:
		return false, fmt.Errorf("%w: %w", jobs.ErrUnavailable, err)
	}
	t.cfg.Metrics.Updates.WithLabelValues(bot, via).Inc()
	if err := t.cfg.Durable.Wait(ctx, broker.PendingKey(t.cfg.Queue)); err != nil {
		return false, fmt.Errorf("%w: %w", jobs.ErrUnavailable, err)
	}
	if !dup {
		// Wake an idle worker now; best effort, workers poll anyway.
		_ = broker.Notify(ctx, t.cfg.Redis, t.cfg.Queue)
	}
	return dup, nil
}

// PickQueue is the queue for update tasks among queues: the critical one
// when it is there (a press waits for nobody's digest), else fallback.
func PickQueue(queues []string, fallback string) string {
	if slices.Contains(queues, jobs.QueueCritical) {
		return jobs.QueueCritical
	}
	return fallback
}
