package worker

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/broker"
)

// leaseLostRetry is how long a task whose lease was lost waits before it
// is looked at again: if the sweeper handed it on, the other worker has it
// and this hand-back finds nothing to move.
const leaseLostRetry = time.Second

// leaseHeld checks, just before a part goes, that the task's lease was
// extended recently enough that no other worker can have been handed it
// (broker.LeaseHeld). A worker that could not reach Redis for that long (a
// failover whose election was retried) gives the task back instead of
// sending: the copy the sweeper handed on is the one that goes. The slot
// the turn took stays counted, which only spaces the next sends more.
func (h *handler) leaseHeld(ctx context.Context, r *run, tn turn) error {
	if err := broker.LeaseHeld(ctx); err != nil {
		h.metrics.Retries.WithLabelValues(r.botLabel(), "lease_lost").Inc()
		r.log.Warn("the task's lease was not extended in time; not sending, another worker may hold it now",
			"slot", tn.grant.Slot(), "error", err)
		return broker.Snooze(leaseLostRetry, "lease lost")
	}
	return nil
}
