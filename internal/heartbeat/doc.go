// Package heartbeat is Herald's dead man's switch. A job pings
// PUT /v1/heartbeats/{name} every so often, declaring the interval it
// promises to keep; when a ping is missing for longer than the interval plus
// a grace period, one alert goes out through the routes, and one recovery
// alert when the job pings again.
//
// State lives in Redis under the {herald} hash tag: a hash of heartbeat
// records, a sorted set of deadlines and an outbox of notifications not yet
// dispatched. Every state change is one Lua script that reads Redis's clock,
// so producer replicas with skewed clocks agree. The Checker runs in every
// producer process; the overdue transition of a heartbeat happens in a
// script, once, in whichever replica gets there first, and the alert it
// creates is leased to that replica until it is dispatched (a failed dispatch
// goes back to the outbox for the next check). Right before the dispatch the
// replica confirms its lease in a script (the handover), so a DELETE that
// came first drops the alert even after it was claimed. See
// docs/HEARTBEATS.md.
package heartbeat
