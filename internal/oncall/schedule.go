package oncall

import (
	"errors"
	"fmt"
	"time"
)

// Schedule says who is on call when: layers of rotations, the later ones
// above the earlier, and overrides above all layers.
type Schedule struct {
	// Name names the schedule in routes, the API and messages.
	Name string
	// Chat, when set, is where the bot announces each handoff and the chat
	// whose /oncall shows this schedule first: a numeric chat id or an
	// @username, as keys.ParseChat accepts it. Topic is a forum topic of
	// it (0: none).
	Chat  string
	Topic int
	// Layers are rotations from the bottom up: where a layer has someone
	// on call, it hides the layers before it; where it has nobody (before
	// it starts, after it ends), the ones below show through.
	Layers []Rotation
	// Overrides are in the order they were made; each hides every layer,
	// and a later one hides an earlier one where both are in force.
	Overrides []Override
	// Users are the people of the schedule's users: list, on call or not:
	// an escalation policy may name them by id or @username too.
	Users []User
}

// Validate checks every layer and override; the error names the one at
// fault and its field.
func (s Schedule) Validate() error {
	if len(s.Layers) == 0 {
		return errors.New("layers: the schedule has no layers; add at least one rotation")
	}
	for i, r := range s.Layers {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("layers[%d].%w", i, err)
		}
	}
	for i, o := range s.Overrides {
		if err := o.Validate(); err != nil {
			return fmt.Errorf("overrides[%d].%w", i, err)
		}
	}
	return nil
}

// OnCall returns who is on call at t and their shift: the span around t
// during which they are on call without a break, whether from one layer,
// several or overrides. ok is false when nobody is on call at t.
func (s Schedule) OnCall(t time.Time) (User, Shift, bool) {
	p := s.pieceAt(t)
	if p.user.IsZero() {
		return User{}, Shift{}, false
	}
	return p.user, s.stretch(p, t), true
}

// Next returns the shift that follows the one at t: the first shift to
// start after t, when the person on call changes. When nobody is on call
// at t, it is the next shift anyone has. ok is false when no shift starts
// within Horizon of t.
func (s Schedule) Next(t time.Time) (User, Shift, bool) {
	p := s.pieceAt(t)
	cur := p.user
	for p.hi.Before(farFuture) && p.hi.Sub(t) <= Horizon {
		q := s.pieceAt(p.hi)
		if q.user.ID != cur.ID {
			if !q.user.IsZero() {
				return q.user, s.stretch(q, q.lo), true
			}
			cur = User{}
		}
		p = q
	}
	return User{}, Shift{}, false
}

// piece is a span of time in which the schedule's answer does not change:
// the same override, or the same shift of the same top layer.
type piece struct {
	user   User // zero: nobody
	lo, hi time.Time
}

// pieceAt is the piece holding t. Overrides are looked at from the latest
// down, then layers from the top down; the first in force at t decides,
// and each one passed over bounds the piece to the span it leaves alone.
func (s Schedule) pieceAt(t time.Time) piece {
	p := piece{lo: farPast, hi: farFuture}
	clip := func(lo, hi time.Time) {
		if lo.After(p.lo) {
			p.lo = lo
		}
		if hi.Before(p.hi) {
			p.hi = hi
		}
	}
	for i := len(s.Overrides) - 1; i >= 0; i-- {
		o := s.Overrides[i]
		if o.contains(t) {
			clip(o.Start, o.End)
			p.user = o.User
			return p
		}
		clip(o.outside(t))
	}
	for i := len(s.Layers) - 1; i >= 0; i-- {
		u, lo, hi, ok := s.Layers[i].at(t)
		clip(lo, hi)
		if ok {
			p.user = u
			return p
		}
	}
	return p
}

// stretch joins p with the pieces before and after it in which the same
// person is on call, looking no further than Horizon from t.
func (s Schedule) stretch(p piece, t time.Time) Shift {
	lo, hi := p.lo, p.hi
	for hi.Before(farFuture) && hi.Sub(t) <= Horizon {
		q := s.pieceAt(hi)
		if q.user.ID != p.user.ID {
			break
		}
		hi = q.hi
	}
	if hi.Sub(t) > Horizon {
		hi = farFuture
	}
	for lo.After(farPast) && t.Sub(lo) <= Horizon {
		q := s.pieceAt(lo.Add(-time.Nanosecond))
		if q.user.ID != p.user.ID {
			break
		}
		lo = q.lo
	}
	if t.Sub(lo) > Horizon {
		lo = farPast
	}
	return exported(lo, hi)
}
