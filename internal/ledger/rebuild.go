package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// rebuild retries a failed message whose task asynq no longer holds (its
// archive keeps at most 10,000 tasks per queue and drops the oldest): the
// worker kept the payload beside the record (keys.Space.FailedTask), from
// which the task is enqueued again under its id, into its queue.
func (m *Messages) rebuild(ctx context.Context, f found) (Status, error) {
	payload, err := m.store.rdb.Get(ctx, keys.Bot(f.bot).FailedTask(f.st.ID)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return f.st, &TooLateError{Status: f.st, Why: "the message failed, and neither its task (no longer in asynq's archive) " +
			"nor a copy of it is kept, so it cannot be rebuilt; send it again"}
	case err != nil:
		return Status{}, fmt.Errorf("ledger: read the payload of %s: %w", f.st.ID, err)
	}
	if err := m.store.reopen(ctx, f.bot, f.st.ID, *f.record); err != nil {
		return Status{}, err
	}
	queue := f.st.Queue
	if queue == "" {
		queue = jobs.QueueDefault
	}
	client := asynq.NewClientFromRedisClient(m.store.rdb) // shared connection: not closed
	_, err = client.EnqueueContext(ctx, asynq.NewTask(jobs.TypeSendMessage, payload), asynq.Queue(queue), asynq.TaskID(f.st.ID),
		asynq.MaxRetry(broker.RetryCeiling), asynq.Timeout(jobs.DefaultTaskTimeout))
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return Status{}, fmt.Errorf("ledger: rebuild %s: %w", f.st.ID, err)
	}
	_ = broker.Notify(ctx, m.store.rdb, queue)
	st := f.st
	st.State, st.SettledAt = StateQueued, nil
	return st, nil
}
