// Package digest folds the coalescible messages pending for one destination
// (a chat, or a forum topic of one) into a few digest messages.
//
// Producers enqueue such messages as digest items into an asynq group per
// destination (see jobs.Request.Coalesce). The workers' asynq servers run
// Aggregate when a group is due; it only bundles the items' payloads into one
// TypeDigest task, because an asynq aggregator can neither fail nor retry.
// The risky work happens in the digest task's handler (Digester), with the
// ordinary retry policy: it claims each item in Redis, renders the owned
// items into at most Config.MaxMessages HTML messages, enqueues those as
// ordinary SendMessage tasks under idempotency keys derived from the digest's
// task id, and carries items that did not fit back into the group.
//
// Crash safety rests on two facts. asynq moves a group's items into an
// aggregation set and deletes them only after the digest task is stored, so
// a crashed aggregator leaves the set behind and the worker's reclaimer puts
// the items back into their group. And an item can reach two digests that
// way, but its claim lets only one of them deliver it.
package digest
