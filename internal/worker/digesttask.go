package worker

import (
	"context"
	"errors"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
)

// digestTasks handles digest tasks (digest.TypeDigest) and digest items that
// reached a worker outside a digest (jobs.TypeDigestItem) with Herald's
// retry policy: an unreadable payload is archived with its reason, a Redis
// failure is retried with backoff within the default retry budget.
type digestTasks struct {
	h *Handler
	d *digest.Digester
}

// ProcessTask implements asynq.Handler.
func (t digestTasks) ProcessTask(ctx context.Context, task *asynq.Task) error {
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	attempt, _ := asynq.GetRetryCount(ctx)
	log := t.h.log.With("task_id", id, "queue", queue, "attempt", attempt, "type", task.Type())
	var (
		rep digest.Report
		err error
	)
	if task.Type() == digest.TypeDigest {
		rep, err = t.d.ProcessDigest(ctx, id, queue, task.Payload())
	} else {
		rep, err = t.d.ProcessItem(ctx, id, queue, task.Payload())
	}
	if rep.RenderErr != nil {
		log.Error("could not render the digest; its items were sent one by one", "error", rep.RenderErr)
	}
	switch {
	case errors.Is(err, digest.ErrInvalidPayload):
		t.h.metrics.DigestItems.WithLabelValues("invalid").Add(float64(max(rep.Items, 1)))
		return t.h.archive(ctx, log, "invalid_payload", err)
	case err != nil:
		r := &run{id: id, queue: queue, attempt: attempt, budget: jobs.DefaultMaxRetry, log: log}
		return t.h.retryLater(ctx, r, "redis", err)
	}
	m := t.h.metrics
	m.DigestItems.WithLabelValues("delivered").Add(float64(rep.Delivered))
	m.DigestItems.WithLabelValues("carried").Add(float64(rep.Carried))
	m.DigestItems.WithLabelValues("skipped").Add(float64(rep.Skipped))
	m.DigestItems.WithLabelValues("invalid").Add(float64(rep.Invalid))
	m.DigestMessages.Add(float64(rep.Messages))
	log.Info("digest handed to the send path", "items", rep.Items, "delivered", rep.Delivered, "messages", rep.Messages,
		"carried", rep.Carried, "skipped", rep.Skipped, "invalid", rep.Invalid)
	return nil
}
