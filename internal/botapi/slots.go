package botapi

import "sync"

// waitSlots are the answers that may wait for their send at once: max in
// all, and a quarter of them (at least one) per Herald token, so that one
// tool sending in bulk leaves others their real message_ids. An answer
// that gets no slot comes at once, with the placeholder.
type waitSlots struct {
	mu       sync.Mutex
	max      int
	perToken int
	total    int
	byToken  map[string]int
}

func newWaitSlots(n int) *waitSlots {
	return &waitSlots{max: n, perToken: max(1, n/4), byToken: map[string]int{}}
}

// take claims a slot for token; false when none is free for it.
func (s *waitSlots) take(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total >= s.max || s.byToken[token] >= s.perToken {
		return false
	}
	s.total++
	s.byToken[token]++
	return true
}

// release gives back a slot token took.
func (s *waitSlots) release(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byToken[token]--; s.byToken[token] <= 0 {
		delete(s.byToken, token)
	}
}
