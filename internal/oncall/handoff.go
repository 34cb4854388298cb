package oncall

import "time"

// Handoff is a change of the person on call.
type Handoff struct {
	// At is when the change happens.
	At time.Time
	// From was on call until At; zero when nobody was.
	From User
	// To is on call from At; zero when nobody is.
	To User
	// Shift is To's shift, beginning at At; zero when To is nobody.
	Shift Shift
}

// Handoffs returns each change of the person on call at an instant in
// [from, to), in time order: a rotation handing over to the next user, an
// override beginning or ending, a layer starting or ending. A shift that
// passes to the same person (the next shift of a one-user rotation, an
// override for whoever is on call anyway) is no handoff.
func (s Schedule) Handoffs(from, to time.Time) []Handoff {
	var out []Handoff
	p := s.pieceAt(from)
	if p.lo.Equal(from) {
		if prev := s.pieceAt(from.Add(-time.Nanosecond)); prev.user.ID != p.user.ID {
			out = append(out, s.handoff(prev, p))
		}
	}
	for p.hi.Before(to) {
		q := s.pieceAt(p.hi)
		if q.user.ID != p.user.ID {
			out = append(out, s.handoff(p, q))
		}
		p = q
	}
	return out
}

// handoff is the change from piece p to the piece q after it.
func (s Schedule) handoff(p, q piece) Handoff {
	h := Handoff{At: q.lo, From: p.user, To: q.user}
	if !q.user.IsZero() {
		h.Shift = s.stretch(q, q.lo)
	}
	return h
}
