package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// Queue names Herald uses by default, highest priority first.
const (
	QueueCritical = "critical"
	QueueDefault  = "default"
	QueueLow      = "low"
	// QueueBroadcast holds the messages of broadcasts (internal/broadcast):
	// the lowest lane, so that a 100,000-chat broadcast does not hold up
	// the other queues' messages.
	QueueBroadcast = "broadcast"
)

// DefaultQueueWeights are the worker's queues and weights when none are
// configured: asynq serves critical six times and default three times as
// often as low, and low twice as often as broadcast. It returns a fresh
// map each time, so a caller may edit it.
func DefaultQueueWeights() map[string]int {
	return map[string]int{QueueCritical: 12, QueueDefault: 6, QueueLow: 2, QueueBroadcast: 1}
}

// DefaultQueues are the queues a producer accepts when none are configured:
// the worker's default queues, highest priority first. It returns a fresh
// slice each time.
func DefaultQueues() []string {
	return []string{QueueCritical, QueueDefault, QueueLow, QueueBroadcast}
}

// Defaults of EnqueueConfig.Timeout and IdempotencyWindow. MaxRetry's,
// DefaultMaxRetry, sits beside SendMessage, whose budget it also is when a
// payload names none. The producer's settings document these values, so
// they are named here once rather than restated there.
const (
	DefaultTaskTimeout       = 2 * time.Minute
	DefaultIdempotencyWindow = 24 * time.Hour
)

// EnqueueConfig holds the enqueue policy.
type EnqueueConfig struct {
	// Queues a caller may choose; default critical, default, low,
	// broadcast.
	Queues []string
	// DefaultQueue is used when a caller names none (HERALD_DEFAULT_QUEUE,
	// default [QueueDefault]).
	DefaultQueue string
	// MaxRetry is the number of failed attempts after the first before a task
	// is archived (HERALD_MAX_RETRY, default [DefaultMaxRetry]). Rate-limit
	// waits and 429s never count.
	MaxRetry int
	// Timeout bounds one attempt (HERALD_TASK_TIMEOUT, default
	// [DefaultTaskTimeout]).
	Timeout time.Duration
	// IdempotencyWindow is how long an idempotency key is remembered after the
	// task completes (HERALD_IDEMPOTENCY_WINDOW, default
	// [DefaultIdempotencyWindow]).
	IdempotencyWindow time.Duration
	// Limits bound the accepted payload (MaxTextLen: HERALD_MAX_TEXT_LEN,
	// default [DefaultMaxTextLen]).
	Limits Limits
	// Durable, when set, is what Settle waits on: the replicas that must
	// hold a write before it is reported as stored. Nil settles at once.
	Durable *durable.Acker
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c EnqueueConfig) WithDefaults() EnqueueConfig {
	if len(c.Queues) == 0 {
		c.Queues = DefaultQueues()
	}
	if c.DefaultQueue == "" {
		c.DefaultQueue = QueueDefault
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = DefaultMaxRetry
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTaskTimeout
	}
	if c.IdempotencyWindow == 0 {
		c.IdempotencyWindow = DefaultIdempotencyWindow
	}
	if c.Limits.MaxTextLen == 0 {
		c.Limits.MaxTextLen = DefaultMaxTextLen
	}
	return c
}

// Enqueuer puts SendMessage tasks into Redis.
type Enqueuer struct {
	client *asynq.Client
	rdb    redis.UniversalClient
	cfg    EnqueueConfig
	now    func() time.Time
	wake   *broker.Notifier // gathers the wake tokens of concurrent requests
}

// NewEnqueuer builds an Enqueuer on an existing go-redis client (shared with
// the caller, not closed by Close).
func NewEnqueuer(rdb redis.UniversalClient, cfg EnqueueConfig) *Enqueuer {
	return &Enqueuer{client: asynq.NewClientFromRedisClient(rdb), rdb: rdb, cfg: cfg.WithDefaults(), now: time.Now,
		wake: broker.NewNotifier(rdb)}
}

// Settle returns once the writes recorded in ctx (durable.Track; Enqueue
// records the nodes it writes to) and those to the nodes of keys have
// reached the replicas EnqueueConfig.Durable asks for. Call it before
// reporting a message as stored. Its error wraps ErrUnavailable, and
// durable.ErrNotReplicated when the master took the writes but its
// replicas did not confirm them in time.
func (e *Enqueuer) Settle(ctx context.Context, keys ...string) error {
	if err := e.cfg.Durable.Wait(ctx, keys...); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Durable reports whether Settle waits for replicas at all.
func (e *Enqueuer) Durable() bool { return e.cfg.Durable.Enabled() }

// Close releases nothing and returns nil: the Enqueuer holds no resources of
// its own, and the shared Redis client stays open for its owner to close.
// (asynq's Client.Close always fails on a shared connection, so it is not
// called.)
func (e *Enqueuer) Close() error { return nil }

// Request is what a producer asks to send.
type Request struct {
	Message SendMessage
	// Queue is the priority queue; "" means the default.
	Queue string
	// Coalesce lets the worker fold this message into a digest with the
	// other coalescible messages pending for the same chat (and forum
	// thread). Ignored on the critical queue: critical messages are never
	// coalesced.
	Coalesce bool
	// CheckMarkup refuses a text whose HTML or MarkdownV2 Telegram would
	// not parse (a *ValidationError naming "text" and the problem). Set it
	// where the caller wrote the markup (the API, the CLI); the worker
	// still falls back to plain text for whatever reaches it.
	CheckMarkup bool
	// Item describes the message as one line of a digest: its title and
	// link are kept even when the body has to be shortened. Nil means the
	// digest derives them from Message.Text.
	Item *DigestItem
	// ThreadSpace is the namespace of the message's thread: the Enqueuer
	// stores Message.Thread.Key after it, so the key reaches only threads
	// opened in the same namespace. Callers that take the key from a
	// sender must set it (MessageThreadSpace, CLIThreadSpace); "" keeps
	// the key as it is, for callers that built the whole key themselves
	// (alerts, with AlertThreadSpace) or enqueue a payload again.
	ThreadSpace string
}

// DigestItem is how a coalesced message appears inside a digest. All fields
// are plain text; the digest renderer escapes them.
type DigestItem struct {
	// Title is the item's one-line summary.
	Title string `json:"title"`
	// URL links the title, when set.
	URL string `json:"url,omitempty"`
	// Summary is the body, shortened in a digest when space is short.
	Summary string `json:"summary,omitempty"`
}

// Result tells where a message went.
type Result struct {
	TaskID string `json:"task_id"`
	Queue  string `json:"queue"`
	// Duplicate is true when the idempotency key was seen within the window
	// and nothing new was enqueued.
	Duplicate bool `json:"duplicate"`
	// Coalesced is true when the message waits in its chat's group for the
	// next digest (Request.Coalesce outside the critical queue).
	Coalesced bool `json:"coalesced,omitempty"`
}

// ErrUnavailable wraps Redis failures: the message was NOT stored and the
// caller must retry (HTTP 503).
var ErrUnavailable = errors.New("queue unavailable")

// IdempotencyID is the task id of the message that the token named from
// sent with idempotency key key: the same key from two tokens names two
// messages. Herald's own messages (from "": alerts, heartbeats, feeds) keep
// the key as their whole identity, so that two producers of one alert
// store it once.
func IdempotencyID(from, key string) string {
	if from != "" {
		key = from + "\x00" + key
	}
	sum := sha256.Sum256([]byte(key))
	return "idem-" + hex.EncodeToString(sum[:16])
}

// defaultQueue is the queue of a message that names none: the queue named
// after its bot when there is one (on a Redis Cluster it shares the bot's
// hash slot, see internal/keys), else DefaultQueue.
func (e *Enqueuer) defaultQueue(m SendMessage) string {
	if m.Bot != "" && m.Bot != keys.DefaultBot && contains(e.cfg.Queues, m.Bot) {
		return m.Bot
	}
	return e.cfg.DefaultQueue
}

// Enqueue validates and stores one message. It returns a *ValidationError for
// bad input and an error wrapping ErrUnavailable when Redis did not take it.
func (e *Enqueuer) Enqueue(ctx context.Context, req Request) (Result, error) {
	msg := req.Message
	queue := req.Queue
	if queue == "" {
		queue = e.defaultQueue(msg)
	}
	if err := e.check(req, &msg, queue); err != nil {
		return Result{}, err
	}
	if err := spaceThread(&msg, req.ThreadSpace); err != nil {
		return Result{}, err
	}
	if msg.MaxRetry == nil {
		budget := e.cfg.MaxRetry
		msg.MaxRetry = &budget
	}
	if coalescible(req, queue) {
		return e.enqueueCoalesced(ctx, msg, queue, req.Item)
	}
	payload, err := msg.Encode()
	if err != nil {
		return Result{}, fmt.Errorf("encode payload: %w", err)
	}
	opts := []asynq.Option{
		asynq.Queue(queue),
		// The worker enforces the task's retry budget (payload max_retry);
		// asynq's own limit is set out of reach because asynq archives a task
		// whose count is spent even when it was only deferred by the limiter.
		asynq.MaxRetry(broker.RetryCeiling),
		asynq.Timeout(e.cfg.Timeout),
	}
	if msg.IdempotencyKey != "" {
		id := IdempotencyID(msg.From, msg.IdempotencyKey)
		if res, dup, err := e.claimed(ctx, id); err != nil || dup {
			return res, err
		}
		opts = append(opts, asynq.TaskID(id), asynq.Retention(e.cfg.IdempotencyWindow))
	}
	marked, err := e.openThread(ctx, msg)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	info, err := e.client.EnqueueContext(ctx, asynq.NewTask(TypeSendMessage, payload), opts...)
	e.wrote(ctx, queue, msg)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return Result{TaskID: IdempotencyID(msg.From, msg.IdempotencyKey), Queue: queue, Duplicate: true}, nil
	case err != nil:
		if marked {
			// Nothing will send the thread's first message: replies must
			// not wait for it. Best effort; the mark expires anyway.
			_ = e.rdb.Del(context.WithoutCancel(ctx), keys.Bot(msg.Bot).Thread(msg.Chat, msg.Thread.Key)).Err()
		}
		return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if msg.IdempotencyKey != "" {
		// Best effort: the task is stored; without the claim only a repeat
		// into another queue could slip through.
		e.claim(ctx, info.ID, info.Queue)
	}
	// Wake an idle worker now rather than at its next poll. Best effort: the
	// task is already stored, and workers poll anyway. Concurrent requests'
	// tokens go in one push (broker.Notifier).
	_ = e.wake.Notify(ctx, queue)
	return Result{TaskID: info.ID, Queue: info.Queue}, nil
}

// check normalises msg, req's message, and validates the request for
// queue. A thread key that gets a namespace is held to MaxThreadKey as the
// sender wrote it; one without (an internal caller's, or a payload being
// enqueued again) may already carry its namespace.
func (e *Enqueuer) check(req Request, msg *SendMessage, queue string) error {
	verr := &ValidationError{}
	if !contains(e.cfg.Queues, queue) {
		verr.add("queue", "%q is not one of %v", queue, e.cfg.Queues)
	}
	maxKey := maxStoredThreadKey
	if req.ThreadSpace != "" {
		maxKey = MaxThreadKey
	}
	msg.normalize(e.now())
	if err := msg.validate(e.cfg.Limits, maxKey); err != nil {
		var v *ValidationError
		if !errors.As(err, &v) {
			return err
		}
		verr.Fields = append(verr.Fields, v.Fields...)
	}
	if req.CheckMarkup {
		checkMarkup(*msg, verr)
	}
	if coalescible(req, queue) && req.Item != nil {
		validateItem(*req.Item, e.cfg.Limits, verr)
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	return nil
}

// openThread marks a thread as opened by a message still to be sent, so
// that a reply or edit that a worker takes first waits for it (up to
// ThreadWait) rather than going out alone. It marks before the enqueue, so
// the worker's record of the sent message cannot be overwritten; a thread
// that already has its first message keeps it until that is closed.
// It reports whether it marked the thread.
func (e *Enqueuer) openThread(ctx context.Context, msg SendMessage) (bool, error) {
	if msg.Thread == nil || msg.Thread.Mode != ThreadOpen {
		return false, nil
	}
	key := keys.Bot(msg.Bot).Thread(msg.Chat, msg.Thread.Key)
	marked, err := e.rdb.SetNX(ctx, key, "pending", ThreadWait).Result()
	if err != nil {
		return false, fmt.Errorf("open thread: %w", err)
	}
	durable.Wrote(ctx, key)
	return marked, nil
}

// claimed looks up the claim of an idempotency key's task id. asynq refuses
// a repeated task id only within one queue; Herald's claim makes the key
// unique across queues. dup reports a claim, with the Result to answer.
func (e *Enqueuer) claimed(ctx context.Context, id string) (res Result, dup bool, err error) {
	q, err := e.rdb.Get(ctx, keys.Idempotency(id)).Result()
	switch {
	case err == nil:
		// The first request's writes may not be on the replicas yet (its
		// answer may have been a 503 for that reason): a duplicate answer
		// confirms them too.
		durable.Wrote(ctx, keys.Idempotency(id))
		durable.Wrote(ctx, broker.PendingKey(q))
		return Result{TaskID: id, Queue: q, Duplicate: true}, true, nil
	case !errors.Is(err, redis.Nil):
		return Result{}, false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return Result{}, false, nil
}

// claim records that the task id of an idempotency key went to queue, for
// the idempotency window. Best effort: the task is stored already.
func (e *Enqueuer) claim(ctx context.Context, id, queue string) {
	_ = e.rdb.SetNX(ctx, keys.Idempotency(id), queue, e.cfg.IdempotencyWindow).Err()
}

// wrote records, for Settle, the nodes an enqueue into queue writes to:
// the queue's slot (asynq's task and lists) and Herald's (the idempotency
// claim, the wake-up list). asynq also adds the queue to its "asynq:queues"
// set, once per client and queue; that set only lists queues for the web UI
// and the metrics, so it is not waited for.
func (e *Enqueuer) wrote(ctx context.Context, queue string, msg SendMessage) {
	durable.Wrote(ctx, broker.PendingKey(queue))
	if msg.IdempotencyKey != "" {
		durable.Wrote(ctx, keys.Idempotency(IdempotencyID(msg.From, msg.IdempotencyKey)))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
