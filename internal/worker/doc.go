// Package worker sends SendMessage tasks to Telegram: an asynq server whose
// handler asks the fleet-wide limiter for a slot, sends through a Sender, and
// turns every Telegram answer into exactly one of: done, deferred (not a
// failure), retried with backoff, or archived with a readable reason.
package worker
