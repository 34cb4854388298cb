package keys

import "testing"

// TestSilenceKeysShareHeraldSlot: the silences, the record of silenced
// alerts and the held messages are fleet-wide keys in {herald}'s slot, with
// the idempotency claims that holding a message writes in the same script.
func TestSilenceKeysShareHeraldSlot(t *testing.T) {
	want := Slot(Tag)
	for _, k := range []string{Silences(), SilenceEnds(), SilenceMeta(), Silenced(), QuietHeld(), QuietDue(), Idempotency("x")} {
		if got := Slot(k); got != want {
			t.Errorf("key %q is in slot %d, want %d", k, got, want)
		}
	}
}
