package broker

import (
	"slices"
	"strconv"
	"testing"
)

// TestAddTokenKeepsEveryQueue: a full set of tokens takes a queue it has
// no token for in place of a repeated one, and nothing more for a queue it
// has; sixteen distinct queues stay as they are.
func TestAddTokenKeepsEveryQueue(t *testing.T) {
	var tokens []string
	for range 20 {
		tokens = addToken(tokens, "default")
	}
	if len(tokens) != wakeListMax {
		t.Fatalf("20 notices of one queue: %d tokens, want %d", len(tokens), wakeListMax)
	}
	tokens = addToken(tokens, "critical")
	tokens = addToken(tokens, "critical")
	tokens = addToken(tokens, "low")
	if len(tokens) != wakeListMax || !slices.Contains(tokens, "critical") || !slices.Contains(tokens, "low") || !slices.Contains(tokens, "default") {
		t.Fatalf("tokens %q", tokens)
	}
	var distinct []string
	for i := range wakeListMax {
		distinct = addToken(distinct, "q"+strconv.Itoa(i))
	}
	if got := addToken(slices.Clone(distinct), "other"); !slices.Equal(got, distinct) {
		t.Fatalf("%d distinct queues and one more: %q", wakeListMax, got)
	}
}
