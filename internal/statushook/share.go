package statushook

import (
	"math/rand/v2"
	"sync"
	"time"
)

// An endpoint's share of a worker's callback goroutines. Each attempt
// holds one goroutine for up to the callback timeout, so one receiver that
// hangs could hold them all and delay every other endpoint's callbacks by
// a timeout per round. The share bounds that: at most a quarter of the
// goroutines (HERALD_CALLBACK_CONCURRENCY / 4, at least 1) post to one
// endpoint at once, and an endpoint whose last shareTrip attempts all
// failed has its circuit opened for shareCooldown, during which only one
// probe at a time goes to it. An event that finds its endpoint's share
// taken (or its circuit open) is handed back (broker.Snooze: not an
// attempt, nothing recorded against the endpoint) for shareWait, and its
// goroutine serves other endpoints meanwhile.

const (
	// shareTrip consecutive failures open an endpoint's circuit.
	shareTrip = 5
	// shareCooldown is how long an open circuit lets one probe through
	// at a time.
	shareCooldown = 30 * time.Second
	// shareWait is how long an event that found its endpoint busy waits
	// (plus up to as much again, so that they do not come back together).
	shareWait = 2 * time.Second
)

// shares tracks every endpoint's posts under way and circuit in this
// process.
type shares struct {
	limit int
	now   func() time.Time
	mu    sync.Mutex
	ends  map[string]*share
}

type share struct {
	busy      int
	failures  int       // consecutive
	openUntil time.Time // the circuit is open until then
}

func newShares(concurrency int, now func() time.Time) *shares {
	return &shares{limit: max(1, concurrency/4), now: now, ends: map[string]*share{}}
}

// enter takes a place in endpoint's share; false when it is taken (or
// the circuit is open and a probe is under way).
func (s *shares) enter(endpoint string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ends[endpoint]
	if e == nil {
		e = &share{}
		s.ends[endpoint] = e
	}
	limit := s.limit
	if s.now().Before(e.openUntil) {
		limit = 1
	}
	if e.busy >= limit {
		return false
	}
	e.busy++
	return true
}

// leave gives the place back with the attempt's outcome; an endpoint
// with no post under way and a closed circuit is forgotten.
func (s *shares) leave(endpoint string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ends[endpoint]
	if e == nil {
		return
	}
	e.busy--
	now := s.now()
	switch {
	case ok:
		e.failures, e.openUntil = 0, time.Time{}
	default:
		e.failures++
		if e.failures >= shareTrip {
			e.openUntil = now.Add(shareCooldown)
		}
	}
	if e.busy <= 0 && e.failures == 0 {
		delete(s.ends, endpoint)
	}
}

// wait is how long an event that found its endpoint busy is handed back
// for.
func (s *shares) wait() time.Duration { return shareWait + rand.N(shareWait) }
