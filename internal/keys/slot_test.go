package keys

import "testing"

// Reference values from the Redis Cluster specification (CLUSTER KEYSLOT).
func TestSlotKnownValues(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":       12739,
		"foo":             12182,
		"{user1000}.a":    Slot("user1000"),
		"{herald}:rl:bot": Slot("herald"),
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}
