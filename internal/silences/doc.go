// Package silences keeps alerts from being sent now: silences, which mute
// the alerts they match for a while, and the holding area of quiet hours,
// which keeps a route's non-critical alerts until its quiet window ends.
//
// # Silences
//
// A silence is a list of matchers on an alert's source, severity and
// labels (all must hold; each is an exact value or a regular expression
// matching the whole value, as in Alertmanager), a start, an end, a
// comment and its creator (through the API, the token's name). Silences
// live in Redis under the {herald} hash tag: a hash of records by id, a
// sorted set of ids scored by end time, so that the silences still in
// force (or still to come) are one range away, and a hash of meta entries
// (a write count and the size of its regular expressions). Creating one is
// one Lua script (it also enforces the cap on live silences and their
// budget of regular expressions); expiring one rewrites its end in a
// compare-and-set script. An expired silence stops matching at its end and
// is removed after Config.Retention, or sooner when more than
// Config.MaxExpired are kept (oldest first). The API pages its listings.
//
// Regular expressions run on every alert, in time proportional to the
// value's length times their compiled size, so that size is bounded
// before anything is compiled: per matcher, per silence and over all the
// live silences of the fleet (Config.MaxMatcherProgram, MaxSilenceProgram,
// MaxLiveProgram). A silence whose every matcher matches (nearly) any
// value needs Input.All (broadness tells how that is judged).
//
// The Store implements alerts.Silencer: every alert the Router routes is
// checked against the live silences, which each process caches for
// Config.CacheTTL (1 s); a reload compiles only the silences it has not
// compiled in their current version. A silence created through one
// producer therefore applies on every other producer within that bound,
// and at once on the producer that created it. A caught alert is not
// sent; it is appended to a capped stream with the id of the silence, and
// GET /v1/silences/{id}/alerts lists it.
//
// # Quiet hours
//
// The Store also implements alerts.Holder. A message that a route's quiet
// hours hold is stored as a digest item (jobs.CoalescedItem) in a hash,
// with its release time in a sorted set; holding it also claims its
// idempotency key, as an enqueue would. Every producer runs a releaser
// (Start) that, once a second, leases the items whose time has come (one
// script), puts each into its destination's digest group
// (jobs.Enqueuer.EnqueueItem), and then deletes it. A releaser that dies
// after the lease leaves the item to another one when the lease ends; the
// item's id keeps it from being delivered twice. The digest that results
// is the ordinary one of docs/DIGESTS.md: it goes out once the group has
// been quiet for the digest grace period.
//
// docs/SILENCES.md describes the API and the routing file's quiet_hours.
package silences
