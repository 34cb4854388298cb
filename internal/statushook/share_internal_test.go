package statushook

import (
	"testing"
	"time"
)

// TestShareCircuit: an endpoint's share is a quarter of the goroutines;
// after shareTrip failures in a row only one probe at a time goes to it
// until shareCooldown has passed or a post succeeds.
func TestShareCircuit(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newShares(8, func() time.Time { return now })
	if !s.enter("a") || !s.enter("a") || s.enter("a") || !s.enter("b") {
		t.Fatal("the share of 8 goroutines is not 2 per endpoint")
	}
	s.leave("a", false)
	s.leave("a", false)
	for range shareTrip - 2 {
		if !s.enter("a") {
			t.Fatal("refused below the share")
		}
		s.leave("a", false)
	}
	if !s.enter("a") || s.enter("a") {
		t.Fatal("an open circuit lets more than one probe through")
	}
	s.leave("a", false)
	now = now.Add(shareCooldown + time.Second)
	if !s.enter("a") || !s.enter("a") {
		t.Fatal("the circuit stayed open after its cooldown")
	}
	s.leave("a", true)
	s.leave("a", true)
	s.leave("b", true)
	if len(s.ends) != 0 {
		t.Fatalf("idle endpoints kept: %v", s.ends)
	}
}
