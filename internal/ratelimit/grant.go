package ratelimit

import "time"

// Grant is the limiter's permission for one request to Telegram: the slot
// a Go decision gave one message, whether it was given under the bot's
// paid limit (the request then carries allow_paid_broadcast, and only
// then), and the latest time the request may leave.
//
// Only the limiter makes a valid Grant (Decision.Grant, from Acquire);
// its fields are unexported so that no other package can. The zero Grant
// permits nothing: the Telegram client refuses to send or edit without a
// valid one, so a path that reaches the client without a slot fails before
// any request leaves instead of flooding Telegram.
type Grant struct {
	slot   string
	ok     bool
	paid   bool
	unpaid bool
	by     time.Time
	cut    time.Time
}

// Valid reports whether g came from a Go decision of the limiter.
func (g Grant) Valid() bool { return g.ok }

// Slot names the slot, for Penalize when Telegram refuses the request.
func (g Grant) Slot() string { return g.slot }

// Paid reports whether the slot was given under the paid limit: the send
// goes with allow_paid_broadcast. It is never true for a slot asked for as
// unpaid (Ask.Unpaid: an edit), which keeps to the free windows.
func (g Grant) Paid() bool { return g.paid && !g.unpaid }

// Unpaid reports whether the slot was asked for as unpaid (Ask.Unpaid):
// the only slot an edit may use while paid broadcasts are on.
func (g Grant) Unpaid() bool { return g.unpaid }

// By is the latest time the request may leave (zero: no bound).
func (g Grant) By() time.Time { return g.by }

// Until returns g bounded to leave by t; a bound g has already that is
// earlier stays. A zero t changes nothing.
func (g Grant) Until(t time.Time) Grant {
	if !t.IsZero() && (g.by.IsZero() || t.Before(g.by)) {
		g.by = t
	}
	return g
}

// CutOff is the time past which the request must not leave even on a
// warm connection, at the cost of closing it (zero: no such bound); By
// alone is checked where cutting costs nothing.
func (g Grant) CutOff() time.Time { return g.cut }

// CutAt returns g with the cut-off t (CutOff); a cut-off g has already
// that is earlier stays. A zero t changes nothing.
func (g Grant) CutAt(t time.Time) Grant {
	if !t.IsZero() && (g.cut.IsZero() || t.Before(g.cut)) {
		g.cut = t
	}
	return g
}

// Grant is the permission of a Go decision (the zero Grant for any other
// kind): what the Telegram client needs to send the message.
func (d Decision) Grant() Grant {
	if d.Kind != Go {
		return Grant{}
	}
	return d.grant
}
