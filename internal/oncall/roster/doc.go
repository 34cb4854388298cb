// Package roster is on-call's stateful side: who is on call now, with the
// overrides made through the API; the handoff announcements; the on-call
// API (GET /v1/oncall, POST /v1/oncall/{schedule}/overrides) and the
// /oncall bot command. Package oncall is the model it computes with.
//
// # The roster
//
// A Roster (roster.go) answers who is on call now and next: the schedules
// in force (a Catalog: the routing file's schedules:, swapped on reload)
// with the overrides made through the API above them (Overrides,
// overrides.go, a list per schedule in Redis, dropped once ended). The
// escalation engine asks it one question, Roster.OnCall: who is on call in
// schedule X at t (escalation.Roster is that question).
//
// # Handoffs and /oncall
//
// The Announcer (handoff.go) runs in every producer and posts a message to
// a schedule's chat at each handoff, once fleet-wide: an idempotency key
// per handoff and a compare-and-set cursor per schedule. It also
// publishes the schedules to Redis (snapshot.go) for the workers, which
// have no routing file: their press handler answers /oncall in a chat
// with Commands (command.go), reading that Snapshot and the overrides.
//
// # In the producer
//
// New builds the producer's side from a Config: the Roster, the
// Announcer (Start, Shutdown) and the API's routes (Mounts, api.go);
// internal/app wires it. Settings (settings.go) holds
// HERALD_ONCALL_ANNOUNCE_INTERVAL. Its keys are keys.OnCallOverrides,
// keys.OnCallHandoffs and keys.OnCallSchedules.
//
// docs/ONCALL.md describes it for its users.
package roster
