package ledger

// State is where a message is. The values are stable snake_case strings: the
// API, callbacks and metrics use them as they are.
type State string

// The states. Queued, Scheduled and Sending are on the way; the others are
// settled.
const (
	// StateQueued: stored, waiting for a worker (or in its chat's digest
	// group, waiting for the digest).
	StateQueued State = "queued"
	// StateScheduled: due later: waiting for its send slot (rate limits), or
	// for the next try after a temporary failure.
	StateScheduled State = "scheduled"
	// StateSending: a worker holds it and is sending it, or waiting in
	// memory for its slot.
	StateSending State = "sending"
	// StateSent: Telegram accepted every part.
	StateSent State = "sent"
	// StateFailed: archived; Reason says why. It may be retried.
	StateFailed State = "failed"
	// StateSilenced: an alert a silence caught; nothing was sent.
	StateSilenced State = "silenced"
	// StateCoalesced: carried by a digest (Record.Digest), not sent on its
	// own.
	StateCoalesced State = "coalesced"
	// StateCancelled: cancelled through the API before it was sent.
	StateCancelled State = "cancelled"
)

// Settled reports whether s is final: no worker will act on the message
// again unless it is retried.
func (s State) Settled() bool {
	switch s {
	case StateSent, StateFailed, StateSilenced, StateCoalesced, StateCancelled:
		return true
	}
	return false
}

// ReasonChatBlocked is the reason of a message to a chat that blocked or
// removed the bot: the first one carries Telegram's 403, the later ones fail
// without a request.
const ReasonChatBlocked = "chat_blocked"
