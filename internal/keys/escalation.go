package keys

import (
	"crypto/sha256"
	"encoding/hex"
)

// Escalations (internal/escalation) and on-call (internal/oncall/roster)
// are fleet-wide: every key below carries the {herald} tag, so that one
// script sees an escalation's record, its timer and the messages' homes
// together.

// Escalation holds one escalation of an alert (a hash): the alert, its
// policy, its homes and how far through the steps it is.
func Escalation(id string) string { return prefix + "esc:" + id }

// EscalationsDue orders the escalations by when they are next looked at
// (a sorted set of ids by unix microseconds); a producer that claims one
// moves it to the end of its lease.
func EscalationsDue() string { return prefix + "esc:due" }

// EscalationHome names the escalation whose alert message is in a thread:
// bot, chat and thread key (jobs.Thread.Key) give the id of the
// escalation, for the acknowledgement of a press to stop it.
func EscalationHome(bot, chat, threadKey string) string {
	if bot == DefaultBot {
		bot = ""
	}
	sum := sha256.Sum256([]byte(bot + "\n" + NormChat(chat) + "\n" + threadKey))
	return prefix + "esc:home:" + hex.EncodeToString(sum[:16])
}

// OnCallOverrides lists the overrides made through the API for one
// schedule, oldest first (a list of JSON objects).
func OnCallOverrides(schedule string) string { return prefix + "oncall:overrides:" + schedule }

// OnCallHandoffs holds, per schedule, the time up to which its handoffs
// have been announced (a hash of unix microseconds by schedule name).
func OnCallHandoffs() string { return prefix + "oncall:handoffs" }

// OnCallSchedules holds the schedules of the producers' routing file, as
// YAML, for the workers that answer /oncall.
func OnCallSchedules() string { return prefix + "oncall:schedules" }

// EscalationDMs counts a policy's recent step DMs to one user (a string
// with an expiry): the first in a while goes ahead of the user's queued
// messages, the rest queue in order.
func EscalationDMs(bot, user, policy string) string {
	if bot == DefaultBot {
		bot = ""
	}
	sum := sha256.Sum256([]byte(bot + "\n" + user + "\n" + policy))
	return prefix + "esc:dms:" + hex.EncodeToString(sum[:16])
}
