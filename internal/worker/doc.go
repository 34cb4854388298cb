// Package worker sends SendMessage tasks to Telegram: an asynq server whose
// handler asks the fleet-wide limiter for a slot, sends through a Sender, and
// turns every Telegram answer into exactly one of: done, deferred (not a
// failure), retried with backoff, or archived with a readable reason.
//
// A bot may send as paid broadcasts (PaidBroadcast, Bot API 7.11): its
// limiter then paces it at the paid limit, each send whose slot was given
// under it carries allow_paid_broadcast, and the sends Telegram bills are
// counted. A refusal of a paid send (no Stars, not enabled) turns paid
// broadcasts off fleet-wide for PaidRetryAfter and the message takes a new
// slot at the free limit in the same attempt.
package worker
