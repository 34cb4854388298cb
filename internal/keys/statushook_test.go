package keys

import (
	"strings"
	"testing"
)

// TestCallbackKeysAreFleetWide: the callback keys carry the {herald} tag,
// and two endpoints never share a health record.
func TestCallbackKeysAreFleetWide(t *testing.T) {
	a, b := HookEndpoint("https://a.example/hook"), HookEndpoint("https://a.example/hook2")
	for _, k := range []string{HookWakeList(), a, b} {
		if !strings.HasPrefix(k, Tag+":hook:") || Slot(k) != Slot(WakeList()) {
			t.Errorf("key %q is not a fleet-wide callback key", k)
		}
	}
	if a == b || a != HookEndpoint("https://a.example/hook") {
		t.Errorf("endpoint keys %q and %q", a, b)
	}
	if HookWakeList() == WakeList() {
		t.Error("the callbacks share the Telegram workers' wake list")
	}
}
