package keys

import (
	"strings"
	"testing"
)

// TestSameSlot checks that every key carries the one hash tag, so a Lua script
// may touch any set of them on Redis Cluster.
func TestSameSlot(t *testing.T) {
	all := []string{WakeList(), WakeInbox("w1"), Idempotency("x"), BotLimit(), QueueLimit("default"), ChatLimit("@Chan"), ChatLimit("-1001"), ChatSendLimit("1"),
		Recent429(), Reservation("abc"), Sent("abc"), Migrations(), Failures()}
	want := Slot(BotLimit())
	for _, k := range all {
		if !strings.HasPrefix(k, Tag+":") {
			t.Errorf("key %q lacks the %s tag", k, Tag)
		}
		if got := Slot(k); got != want {
			t.Errorf("key %q is in slot %d, want %d", k, got, want)
		}
	}
	if ChatLimit("@Chan") != ChatLimit("@chan") {
		t.Errorf("channel usernames must share one limit regardless of case")
	}
}
