package broker

import "time"

// Figures of asynq v0.26 that Herald's scripts and settings depend on; the
// contract test checks each against the real asynq.
const (
	// leaseDuration is how far ahead asynq sets a task's lease when it
	// dequeues the task and each time the owning server's heartbeat (every
	// 5 s) extends it (asynq's rdb.LeaseDuration). A lease that ends less
	// than LeaseDuration-d from now has not been extended for d.
	leaseDuration = 30 * time.Second

	// AggregationTimeout is asynq's deadline for one aggregation run
	// (rdb.aggregationTimeout): an aggregation set is scored with its
	// creation time plus this, and asynq's recoverer reclaims it after
	// that. A reclaimer's delay must be shorter.
	AggregationTimeout = 2 * time.Minute

	// RetryCeiling is the retry limit handed to asynq (asynq.MaxRetry): high
	// enough never to be reached (a task failing every 10 minutes would take
	// 19 years). The worker enforces each task's own budget; asynq's limit
	// is set out of reach because asynq archives a task whose count is spent
	// even when it was only deferred.
	RetryCeiling = 1_000_000
)

// backstopDelay is the retry delay to hand asynq (its RetryDelayFunc) for a
// task the worker itself promotes after d. asynq stores the retry score in
// whole Unix seconds, truncated; one second more keeps asynq's forwarder from
// moving the task before its slot (it only acts if this process dies).
func backstopDelay(d time.Duration) time.Duration { return d + time.Second }
