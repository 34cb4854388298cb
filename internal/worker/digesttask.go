package worker

import (
	"context"
	"errors"

	"github.com/herald-dev/herald/internal/broker"

	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
)

// digestTasks handles digest tasks (digest.TypeDigest) and digest items that
// reached a worker outside a digest (jobs.TypeDigestItem) with Herald's
// retry policy: an unreadable payload is archived with its reason, a Redis
// failure is retried with backoff within the default retry budget.
type digestTasks struct {
	h *handler
	d *digest.Digester
}

// Handle implements broker.Handler.
func (t digestTasks) Handle(ctx context.Context, task broker.Task) error {
	log := t.h.log.With("task_id", task.ID, "queue", task.Queue, "attempt", task.Attempt, "type", task.Type)
	r := &run{Task: task, budget: jobs.DefaultMaxRetry, log: log}
	var (
		rep digest.Report
		err error
	)
	if task.Type == digest.TypeDigest {
		rep, err = t.d.ProcessDigest(ctx, task.ID, task.Queue, task.Payload)
	} else {
		rep, err = t.d.ProcessItem(ctx, task.ID, task.Queue, task.Payload)
	}
	if rep.RenderErr != nil {
		log.Error("could not render the digest; its items were sent one by one", "error", rep.RenderErr)
	}
	switch {
	case errors.Is(err, digest.ErrInvalidPayload):
		t.h.metrics.DigestItems.WithLabelValues("invalid").Add(float64(max(rep.Items, 1)))
		return t.h.archive(ctx, r, "invalid_payload", err)
	case err != nil:
		return t.h.finish(ctx, r, decide(storeError{err}, r.situation()))
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
