// Package quota bounds what one API token may hold of the fleet's shared
// capacity: messages and broadcast recipients queued at once, broadcasts
// per hour, alerts per minute, and audiences (how many, how large, for how
// long). The limits are per token, set in the tokens file
// (internal/httpapi), with defaults that a small team never meets
// (DefaultLimits).
//
// # How it counts
//
// Every producer of a fleet counts in Redis, in one hash per token
// (keys.TokenQuota) whose fields are "<quota>:<bucket>": the count of one
// quota in one time bucket (the bucket is the Unix time divided by the
// quota's bucket width). A request's check is one Lua script (takeScript)
// that drops the buckets that left the quota's horizon, sums the others,
// and either refuses (nothing changes) or adds the request's count to the
// current bucket of every quota it asked for, all or nothing. There is no
// per-message state and no scan: the hash holds at most a few dozen
// fields per token.
//
// Rates (broadcasts per hour, alerts per minute) are sliding windows of
// buckets (12 of 5 minutes, 6 of 10 seconds): a window is over-counted by
// at most one bucket's width of history (a refusal may come up to one
// bucket earlier than an exact log would give it), never under-counted.
//
// Queued-at-once counts (messages, broadcast recipients) use buckets of an
// hour over a 24-hour horizon. The producer adds a message to the bucket
// of its creation time (jobs.SendMessage.CreatedAt); the worker takes it
// away from that bucket when the message leaves the queues: sent, failed
// (archived), cancelled or dropped (Releases: a worker gathers 100 ms of
// them and runs one script per token, which never recreates a bucket that
// expired). What this misses heals itself:
//   - a message that leaves without the worker's release (cancelled while
//     pending, a worker killed between its last step and the release)
//     keeps counting until its bucket leaves the horizon: at most 24 hours;
//   - a message released twice (a failed message retried and failing
//     again) counts one less, at most until its bucket expires; no bucket
//     counts below zero;
//   - a message still queued after 24 hours (scheduled far ahead, a long
//     outage) stops counting.
//
// So the figure is exact in the common path and off, in either direction,
// only by the messages of those rare paths, for at most 24 hours.
package quota
