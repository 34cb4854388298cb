package worker

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/keys"
)

// keepFailed stores a failed message's payload beside its ledger record,
// for the record's retention: asynq's archive keeps at most 10,000 tasks
// per queue, so one sender's failures could evict another's, and POST
// /v1/messages/{id}/retry rebuilds the task from this copy
// (ledger.Messages.Retry). Best effort: without it the retry says the
// message cannot be rebuilt.
func (h *handler) keepFailed(ctx context.Context, r *run) {
	if r.bot == nil || h.ledger == nil {
		return
	}
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := h.rdb.Set(kctx, keys.Bot(r.bot.name).FailedTask(r.ID), r.Payload, h.ledger.Retention()).Err(); err != nil {
		r.log.Warn("could not keep the failed message's payload; a retry after its task leaves the archive cannot rebuild it", "error", err)
	}
}
