package worker

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// The replication barrier. A send's record (keys.Sent) is written after
// Telegram accepted the part, and the Bot API has no idempotency key: a
// record that dies with a master whose replica lagged makes the promoted
// replica redeliver the task, and the part is sent again. Waiting for the
// replicas after the record (confirmSent) cannot undo a send that already
// happened, so the worker also waits before: when the durable Acker asks
// for replicas, the limiter decision that can let a part go is preceded by
// a barrier (Acquire) or accompanied by one (Confirm, after a sleep) that
// confirms the replicas of the node holding the task's records hold every
// write made there so far. A replica that stopped confirming stops the
// sends, and only the parts already on their way to Telegram when it
// stopped can lose their record. Without replicas the barrier sends
// nothing to Redis (durable.Acker.Wait: off, or auto with a cached count
// of zero).

// replicaRetry is how long a task whose replicas did not confirm waits
// before it is tried again: WAIT has waited for its timeout by then (1s by
// default), or the node could not be asked at all (a failover under way).
const replicaRetry = time.Second

// notReplicated is a failed replication barrier: the replicas did not
// confirm the writes in time, or the node could not be asked. Nothing was
// sent.
type notReplicated struct{ err error }

func (e notReplicated) Error() string {
	return "not sending until the redis replicas confirm the writes so far: " + e.err.Error()
}

func (e notReplicated) Unwrap() error { return e.err }

// barrier returns once the replicas that the durable Acker asks for hold
// every write made so far on the node of the task's records, or a
// notReplicated error.
func (h *handler) barrier(ctx context.Context, r *run) error {
	if err := h.durable.Wait(ctx, r.bot.keys.Sent(r.ID)); err != nil {
		return notReplicated{err}
	}
	return nil
}

// acquire asks the limiter for the part's slot once the barrier passed, so
// that a failed barrier costs no slot; the reservation the task held in
// memory (ask.Resume) is stored then for its next attempt. It returns when
// the limiter was asked (after the barrier: the barrier's round trip does
// not count against the slot's guard).
func (h *handler) acquire(ctx context.Context, r *run, ask ratelimit.Ask) (time.Time, ratelimit.Decision, error) {
	if err := h.barrier(ctx, r); err != nil {
		h.hold(ctx, r, ask.Resume)
		return time.Time{}, ratelimit.Decision{}, err
	}
	asked := time.Now()
	dc, err := r.bot.limiter.Acquire(ctx, ask)
	return asked, dc, err
}

// confirm is Limiter.Confirm for the slot of a Go with a wait that the task
// slept through, with the barrier run alongside on another connection (one
// round trip for both): a replica that stopped confirming during the sleep
// holds the send back. The slot is lost then (it is due now); the
// reservation is stored in case it moved.
func (h *handler) confirm(ctx context.Context, r *run, chat string, dc ratelimit.Decision) (ratelimit.Kind, error) {
	lim := r.bot.limiter
	if !h.durable.Enabled() {
		return lim.Confirm(ctx, chat, r.ID, dc)
	}
	barrier := make(chan error, 1)
	go func() { barrier <- h.barrier(ctx, r) }()
	k, err := lim.Confirm(ctx, chat, r.ID, dc)
	if berr := <-barrier; berr != nil && err == nil {
		h.hold(ctx, r, dc.Resume)
		return 0, berr
	}
	return k, err
}

// hold stores a reservation the task held in memory (Decision.Resume; ""
// for none) before the task goes back to Redis, so that its next attempt
// keeps the slot.
func (h *handler) hold(ctx context.Context, r *run, resume string) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := r.bot.limiter.Hold(hctx, r.ID, resume); err != nil {
		r.log.Warn("could not keep the reserved slot; the task will take a new one", "error", err)
	}
}

// replicasBehind hands back a task whose barrier failed. Nothing was sent:
// like a rate-limit deferral it spends no retry budget and is no Telegram
// failure; it counts as a retry for reason "redis".
func (h *handler) replicasBehind(r *run, err notReplicated) error {
	h.metrics.Retries.WithLabelValues(r.botLabel(), "redis").Inc()
	r.log.Warn("redis replicas do not confirm the writes; not sending until they do", "retry_in", replicaRetry, "error", err.err)
	return broker.Snooze(replicaRetry, "redis replicas behind")
}
