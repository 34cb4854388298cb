package statushook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// ErrOff is Emit's and CheckURL's error when callbacks are off: no master
// key is set.
var ErrOff = errors.New("status callbacks are off: this Herald has no " + EnvSecret +
	"; set it (the same on producers and workers) to send callbacks")

// taskDeadline bounds one callback task's run, the post included (the
// post's own bound, HERALD_CALLBACK_TIMEOUT, is at most maxTimeout).
const taskDeadline = maxTimeout + 30*time.Second

// Emitter stores status events for delivery: each as a task of its own
// (TaskType) in the callbacks' queue, which the workers' deliverers serve
// (NewDeliverer). Both binaries may emit. A nil *Emitter is off.
type Emitter struct {
	rdb    redis.UniversalClient
	client *asynq.Client
	policy Policy
	master []byte // nil: callbacks are off
	health health
}

// NewEmitter returns an Emitter on rdb (shared with the caller, not
// closed) under cfg's settings. With no master key it returns an Emitter
// that is off (Enabled false, Emit and CheckURL refuse with ErrOff);
// errors are settings that cannot be read.
func NewEmitter(rdb redis.UniversalClient, cfg Config) (*Emitter, error) {
	master, err := cfg.master()
	if err != nil {
		return nil, err
	}
	policy, err := cfg.policy()
	if err != nil {
		return nil, err
	}
	return &Emitter{rdb: rdb, client: asynq.NewClientFromRedisClient(rdb), policy: policy, master: master,
		health: health{rdb: rdb}}, nil
}

// Enabled reports whether callbacks are on.
func (e *Emitter) Enabled() bool { return e != nil && e.master != nil }

// CheckURL is the check to run when a sender names a callback_url, before
// anything is stored: nil, or a *URLError naming the field (answer 400
// with it), which wraps ErrOff when callbacks are off.
func (e *Emitter) CheckURL(rawURL string) error {
	if !e.Enabled() {
		return &URLError{Field: CallbackURLField, Reason: ErrOff.Error(), Err: ErrOff}
	}
	_, err := e.policy.ValidateURL(rawURL)
	return err
}

// Emit stores ev for delivery to rawURL and wakes an idle deliverer. ev.ID
// (EventID) is the task's id as well as the webhook-id: while an event
// with that id is queued, retried or archived, a repeated Emit (a
// redelivered send task settling again) stores nothing and returns nil, so
// the receiver gets it once. It returns ErrOff when callbacks are off, a
// *URLError for a URL the policy refuses, an error naming the field for a
// bad event, and any other error when Redis did not take it (retry then).
// The write is recorded in ctx for durable.Wait, like an enqueue's.
func (e *Emitter) Emit(ctx context.Context, rawURL string, ev Event) error {
	if !e.Enabled() {
		return ErrOff
	}
	if _, err := e.policy.ValidateURL(rawURL); err != nil {
		return err
	}
	if err := checkID(ev.ID); err != nil {
		return fmt.Errorf("event %s: %w", ev.Type, err)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(job{V: jobVersion, URL: rawURL, ID: ev.ID, Type: ev.Type, At: ev.Timestamp, Body: body})
	if err != nil {
		return fmt.Errorf("event %s: %w", ev.ID, err)
	}
	_, err = e.client.EnqueueContext(ctx, asynq.NewTask(TaskType, payload), asynq.Queue(Queue), asynq.TaskID(ev.ID),
		asynq.MaxRetry(broker.RetryCeiling), asynq.Timeout(taskDeadline))
	durable.Wrote(ctx, broker.PendingKey(Queue))
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return nil
	case err != nil:
		return fmt.Errorf("storing the callback event %s: %w", ev.ID, err)
	}
	// Best effort: the event is stored, and an idle deliverer looks at its
	// queue within HERALD_MAX_IDLE anyway.
	_ = broker.NotifyList(ctx, e.rdb, keys.HookWakeList(), Queue)
	return nil
}
