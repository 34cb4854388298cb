package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/durable"
)

// Prepare normalises and validates req's message as Enqueue does, without
// storing anything, and returns it ready for EnqueueBatch: its retry
// budget set. req.Queue must name one of the queues; threads and digests
// are refused (a batch stores plain messages only).
func (e *Enqueuer) Prepare(req Request) (SendMessage, error) {
	msg := req.Message
	verr := &ValidationError{}
	if msg.Thread != nil {
		verr.add("thread", "is not supported here: a batch stores plain messages")
	}
	if req.Coalesce {
		verr.add("coalesce", "is not supported here: a batch stores plain messages")
	}
	if err := e.check(req, &msg, req.Queue); err != nil {
		var v *ValidationError
		if !errors.As(err, &v) {
			return SendMessage{}, err
		}
		verr.Fields = append(verr.Fields, v.Fields...)
	}
	if len(verr.Fields) > 0 {
		return SendMessage{}, verr
	}
	if msg.MaxRetry == nil {
		budget := e.cfg.MaxRetry
		msg.MaxRetry = &budget
	}
	return msg, nil
}

// BatchItem is one message of EnqueueBatch, with the task id it is stored
// under.
type BatchItem struct {
	TaskID  string
	Message SendMessage
}

// EnqueueBatch stores messages that Prepare returned into queue, pipelined
// (broker.EnqueueBatch: about a thousand per round trip), with the
// Enqueuer's timeout and retry policy. An item whose task id the queue
// holds already is skipped, so a repeated call stores only what an earlier
// one missed. It returns how many it added; its error wraps
// ErrUnavailable. It wakes idle workers once it is done; call Settle
// before reporting the messages as stored.
func (e *Enqueuer) EnqueueBatch(ctx context.Context, queue string, items []BatchItem) (int, error) {
	if !contains(e.cfg.Queues, queue) {
		return 0, fmt.Errorf("jobs: queue %q is not one of %v", queue, e.cfg.Queues)
	}
	tasks := make([]broker.BatchTask, len(items))
	for i, it := range items {
		payload, err := it.Message.Encode()
		if err != nil {
			return 0, fmt.Errorf("encode payload: %w", err)
		}
		tasks[i] = broker.BatchTask{ID: it.TaskID, Type: TypeSendMessage, Payload: payload}
	}
	// No retention, as for a single message without an idempotency key:
	// a batch is kept from repeating by its task ids and the ledger's
	// records (a worker sends no message whose record is settled), not by
	// completed tasks kept in Redis.
	opts := broker.BatchOptions{Queue: queue, MaxRetry: broker.RetryCeiling, Timeout: e.cfg.Timeout}
	durable.Wrote(ctx, broker.PendingKey(queue))
	added, err := broker.EnqueueBatch(ctx, e.rdb, opts, tasks)
	if err != nil {
		return added, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// Several tokens, so that several idle workers start on the batch at
	// once rather than one after the other. Best effort, as for Enqueue.
	for range min(added, broker.MaxWakeTokens) {
		if broker.Notify(ctx, e.rdb, queue) != nil {
			break
		}
	}
	return added, nil
}

// Accepts reports whether queue is one of the queues messages may go to
// (HERALD_QUEUES).
func (e *Enqueuer) Accepts(queue string) bool { return contains(e.cfg.Queues, queue) }

// MaxTextLen is the longest text accepted, in UTF-16 code units
// (HERALD_MAX_TEXT_LEN).
func (e *Enqueuer) MaxTextLen() int { return e.cfg.Limits.MaxTextLen }
