// Package escalation tells people about alerts nobody acknowledges, step
// by step.
//
// # Policies
//
// A Policy (policy.go, read from the routing file's escalation_policies:
// by Read in parse.go) is steps, each "notify these targets, then wait
// this long for an acknowledgement": chats (with a forum topic), users by
// direct message, and whoever is on call in a schedule (asked of the
// Roster, see below).
// The steps may be taken again (repeat), and a critical alert that is
// still unacknowledged afterwards is re-notified every repeat_interval.
// A route of the routing file names its policy (escalation:).
//
// # Escalations
//
// The alerts router begins an escalation (Store.Begin) when a firing
// alert of such a route has its messages enqueued: their threads are the
// escalation's homes, where every step replies ("escalated to @bob,
// step 2 of 3"). A step's direct messages carry the buttons of the
// alert's message (Home.Ref, buttons.AllowDirect): the person told may
// acknowledge from there. A resolution forgets it (Store.Resolve); an
// acknowledgement of one of its messages stops it (Store.Acknowledge,
// called by the worker's press handler, which observes
// herald_time_to_acknowledge_seconds); a silence stops it at its next
// step. A repeat of the firing alert while the escalation exists changes
// nothing.
//
// State lives in Redis under the {herald} hash tag (package keys): a hash
// per escalation (record.go) holding the alert, the policy, the homes and
// the position (round, step, phase, the step's deadline, the messages
// whose delivery is not known yet), a sorted set of ids by when each is
// next due, and an index from each home to its escalation. Every change
// is one Lua script (scripts.go) on Redis's clock.
//
// The Engine (engine.go, step.go) runs in every producer. Each check
// claims the due escalations, leasing them to itself (their due time
// becomes the lease's end), sends the step's notifications and the
// thread's note, and moves the escalation on by compare and set: only
// the lease's holder, only from the position it read, only while it is
// active; a step stored due (the first, a re-notification) is confirmed
// that way just before it is sent, so that an acknowledgement during the
// check's batch stops it. A producer that dies mid-step loses its lease
// and another takes the step again; the notifications' idempotency keys
// (the firing, the step, the target) keep that from sending anything
// twice. Every
// notification is an ordinary message (jobs.Enqueuer), under the fleet's
// limits and retries.
//
// Telegram sends one message a second to a chat, and the limiter gives a
// chat's messages their turns in order, except that a message of the
// critical queue (a priority queue) takes the first turn waiting for a
// message of another queue. A step's direct message (sendDM, message.go)
// uses that: a policy's first DM to a person in a while (Config.DMWindow,
// a minute, counted in Redis per bot, person and policy) goes on the
// critical queue whatever the alert's severity, its further DMs to the
// person within the window on the default queue, in order. So 60 alerts
// of one policy that reach the on-call person at once queue their DMs
// behind each other (a minute: Telegram's limit), and another policy's
// step reaching the same person meanwhile is next in their chat, within
// a couple of seconds of its time. The thread notes keep the alert's
// queue (critical for a critical alert); the handoff posts go on the
// default queue, so a step's first DM also goes before them bot-wide. While a step waits, the engine looks at its
// messages' delivery (Deliveries: the workers' ledger) every
// CheckInterval: one that failed is shown in the thread with the reason,
// and a step that reached nobody (a user who never started the bot,
// nobody on call) moves on at once. herald_escalations_total counts the
// steps, each once.
//
// # On call
//
// Who is on call is package internal/oncall/roster's: the engine asks a
// Roster (oncall.go, Config.Roster) who is on call in a schedule at the
// step's time, overrides included; beyond that, only Read looks at the
// file's schedules (an on_call target must name one, a user may be named
// by the id or @username of one of theirs).
// The roster package also holds the stored overrides, the handoff
// announcements, the on-call API and the /oncall command.
//
// docs/ONCALL.md describes it for its users.
package escalation
