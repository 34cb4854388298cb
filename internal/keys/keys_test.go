package keys

import (
	"strings"
	"testing"
)

// TestSameSlot checks that every key carries the one hash tag, so a Lua script
// may touch any set of them on Redis Cluster.
func TestSameSlot(t *testing.T) {
	all := []string{WakeList(), WakeInbox("w1"), Idempotency("x"), BotLog(), QueueLog("default"), ChatTurns("@Chan"), ChatTurns("-1001"), ChatSends("1"),
		BotPause(), ChatPause("@x"), PriorityLog(), ChatID("@x"), Reservation("abc"), Sent("abc"), Migrations(), Failures()}
	want := Slot(BotLog())
	for _, k := range all {
		if !strings.HasPrefix(k, Tag+":") {
			t.Errorf("key %q lacks the %s tag", k, Tag)
		}
		if got := Slot(k); got != want {
			t.Errorf("key %q is in slot %d, want %d", k, got, want)
		}
	}
	if ChatTurns("@Chan") != ChatTurns("@chan") || ChatSends("@Chan") != ChatSends("@chan") {
		t.Errorf("channel usernames must share one limit regardless of case")
	}
}
