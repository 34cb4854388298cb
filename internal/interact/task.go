package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// How an update reached Herald (payload.Via, the via label).
const (
	viaPoll    = "poll"
	viaWebhook = "webhook"
)

// payloadVersion is the payload version this build writes; a worker
// archives a payload of a newer version rather than guess at it.
const payloadVersion = 1

// payload is the JSON of a TypeUpdate task.
type payload struct {
	V int `json:"v"`
	// Bot is the name of the bot that received the update.
	Bot string `json:"bot"`
	// Via is viaPoll or viaWebhook.
	Via string `json:"via"`
	// ReceivedAt is when Herald received the update: a press is answered
	// within seconds or not at all, and a failed answer is retried only
	// while it is recent.
	ReceivedAt time.Time       `json:"received_at"`
	Update     telegram.Update `json:"update"`
}

// decodePayload reads a TypeUpdate payload.
func decodePayload(b []byte) (payload, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return payload{}, fmt.Errorf("interact: payload: %w", err)
	}
	if p.V > payloadVersion {
		return payload{}, fmt.Errorf("interact: payload version %d is newer than this worker's %d", p.V, payloadVersion)
	}
	if !keys.ValidBotName(p.Bot) {
		return payload{}, fmt.Errorf("interact: payload names no valid bot (%q)", p.Bot)
	}
	return p, nil
}

// Defaults of tasksConfig.
const (
	// defaultTaskTimeout bounds one attempt at an update task.
	defaultTaskTimeout = time.Minute
	// defaultDedupWindow is how long a finished update task keeps its id,
	// so that the same update delivered again is not queued again.
	defaultDedupWindow = time.Hour
)

// tasksConfig configures tasks.
type tasksConfig struct {
	// Redis is where the tasks go. Required.
	Redis redis.UniversalClient
	// Queue takes the tasks; default jobs.QueueCritical (see pickQueue).
	Queue string
	// Durable, when set, is waited on after each enqueue (the poller moves
	// its offset only past updates the replicas hold). The producer leaves
	// it nil: its API waits for the request's writes itself.
	Durable *durable.Acker
	// Timeout and DedupWindow are the tasks' attempt timeout and
	// retention; defaults defaultTaskTimeout and defaultDedupWindow. (The
	// retry budget is the handler's: handlerConfig.MaxRetry.)
	Timeout     time.Duration
	DedupWindow time.Duration
	// Metrics count the updates; nil: unregistered ones.
	Metrics *metrics
	// Now is the clock of ReceivedAt; default time.Now.
	Now func() time.Time
}

// withDefaults fills the zero fields.
func (c tasksConfig) withDefaults() tasksConfig {
	if c.Queue == "" {
		c.Queue = jobs.QueueCritical
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTaskTimeout
	}
	if c.DedupWindow == 0 {
		c.DedupWindow = defaultDedupWindow
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Metrics = c.Metrics.orNew()
	return c
}

func (c tasksConfig) validate() error {
	var errs []error
	if c.Redis == nil {
		errs = append(errs, errors.New("interact: TasksConfig.Redis is required"))
	}
	if c.Timeout < 0 || c.DedupWindow < 0 {
		errs = append(errs, fmt.Errorf("interact: TasksConfig.Timeout (%v) and DedupWindow (%v) must not be negative", c.Timeout, c.DedupWindow))
	}
	return errors.Join(errs...)
}

// tasks puts updates on the queue as TypeUpdate tasks.
type tasks struct {
	cfg    tasksConfig
	client *asynq.Client
}

// newTasks checks cfg and returns tasks on its Redis client (shared, not
// closed by tasks).
func newTasks(cfg tasksConfig) (*tasks, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &tasks{cfg: cfg, client: asynq.NewClientFromRedisClient(cfg.Redis)}, nil
}

// Queue is the queue the tasks go to.
func (t *tasks) Queue() string { return t.cfg.Queue }

// taskID is the id of the task of bot's update: the same update gets the
// same id, and asynq refuses a second task with it while the first is
// queued, running or kept (DedupWindow).
func taskID(bot string, updateID int64) string {
	return "tgupdate-" + bot + "-" + strconv.FormatInt(updateID, 10)
}

// wanted reports whether an update is one Herald acts on: a press, a
// change of the bot's membership, or a message that may be a command (it
// starts with "/"). Others (a private chat's small talk) are confirmed to
// Telegram and dropped.
func wanted(u telegram.Update) bool {
	if u.CallbackQuery != nil || u.MyChatMember != nil {
		return true
	}
	return u.Message != nil && strings.HasPrefix(u.Message.Text, "/")
}

// Enqueue queues u of bot, received via via, when it is wanted. dup
// reports an update that was queued already (nothing new was stored). An
// error means the update is not stored: the caller must not confirm it to
// Telegram.
func (t *tasks) Enqueue(ctx context.Context, bot, via string, u telegram.Update) (dup bool, err error) {
	if !wanted(u) {
		return false, nil
	}
	body, err := json.Marshal(payload{V: payloadVersion, Bot: bot, Via: via, ReceivedAt: t.cfg.Now().UTC(), Update: u})
	if err != nil {
		return false, err
	}
	_, err = t.client.EnqueueContext(ctx, asynq.NewTask(TypeUpdate, body),
		asynq.Queue(t.cfg.Queue),
		asynq.TaskID(taskID(bot, u.UpdateID)),
		// The handler keeps the retry budget (handlerConfig.MaxRetry):
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

// pickQueue is the queue for update tasks among queues: the critical one
// when it is there (a press waits for nobody's digest), else fallback.
func pickQueue(queues []string, fallback string) string {
	if slices.Contains(queues, jobs.QueueCritical) {
		return jobs.QueueCritical
	}
	return fallback
}
