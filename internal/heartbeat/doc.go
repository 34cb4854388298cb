// Package heartbeat is Herald's dead man's switch. A job pings
// PUT /v1/heartbeats/{name} when it succeeds, declaring either the interval
// it promises to keep or the cron schedule it runs on (with a time zone);
// when a ping is missing by the deadline (the interval, or the schedule's
// next time after the last ping, plus a grace period), one alert goes out
// through the routes, and one recovery alert when the job pings again. A
// job may also report a failure (/fail: the alert goes out at once, with
// the request body as its detail) and the start of a run (/start: the run
// must then end within its limit, and its duration is recorded).
//
// State lives in Redis under the {herald} hash tag: a hash of heartbeat
// records, a sorted set of deadlines and an outbox of notifications not yet
// dispatched. Every state change is one Lua script that reads Redis's clock,
// so producer replicas with skewed clocks agree. Lua cannot evaluate a cron
// expression, so for a scheduled heartbeat the Go side computes the
// schedule's next times from the clock a first run of the script reports,
// and the second run picks the first one after its own clock (schedule.go).
// The Checker runs in every producer process; the overdue transition of a
// heartbeat happens in a script, once, in whichever replica gets there
// first, and the alert it creates is leased to that replica until it is
// dispatched (a failed dispatch goes back to the outbox for the next check).
// A /fail makes the same transition in the ping script, and its alert takes
// the same outbox. Right before the dispatch the replica confirms its lease
// in a script (the handover), so a DELETE that came first drops the alert
// even after it was claimed. See docs/HEARTBEATS.md.
package heartbeat
