package telegramfake

import (
	"testing"
	"time"
)

// TestSendCountedAtArrival: a send that waits on the server's own lock
// (here held by the test, as the growth of the message records holds it)
// is judged and recorded at the time it arrived, not when the lock came
// free: a stall inside the fake must not move a send closer to the ones a
// window after it. A second send to the same chat that arrives a second
// later is then admitted at 1 message a second.
func TestSendCountedAtArrival(t *testing.T) {
	s, clock := newFake(t, Config{Private: limit{{N: 1, Per: time.Second}}})
	s.mu.Lock()
	done := make(chan reply, 1)
	go func() { done <- send(s, text("42", "first")) }()
	// Let the request come in and wait for the lock, then move the clock
	// on while it waits.
	time.Sleep(50 * time.Millisecond)
	clock.Advance(300 * time.Millisecond)
	s.mu.Unlock()
	mustAccept(t, <-done)

	ms := s.Messages()
	if len(ms) != 1 || !ms[0].At.Equal(epoch) {
		t.Fatalf("recorded at %v, want its arrival %v", ms[0].At, epoch)
	}
	clock.Advance(700 * time.Millisecond) // a second after the first arrived
	mustAccept(t, send(s, text("42", "second")))
}
