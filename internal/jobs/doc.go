// Package jobs defines Herald's SendMessage task: its versioned JSON payload,
// the validation that producers run before anything reaches Redis, and the
// enqueue side (priority queues, retry budget, timeout and idempotency keys
// mapped to asynq task ids).
package jobs
