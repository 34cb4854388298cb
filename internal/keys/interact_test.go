package keys

import (
	"strings"
	"testing"
)

// TestInteractKeysShareTheBotSlot: the updates lease and offset and the
// lines of presses sit in their bot's slot, beside the callback subjects
// and press records the same scripts touch.
func TestInteractKeysShareTheBotSlot(t *testing.T) {
	for _, name := range []string{"", DefaultBot, "pages"} {
		s := Bot(name)
		want := Slot(s.ButtonSubject("r"))
		for _, k := range []string{s.UpdatesLease(), s.UpdatesOffset(), s.PressLines("@Chan", "fp"), s.CallbackQuery("q"), s.Acknowledged("@Chan", "fp"), s.ButtonChats("r")} {
			if !strings.Contains(k, s.HashTag()+":") {
				t.Errorf("bot %q: key %q lacks the tag %s", name, k, s.HashTag())
			}
			if got := Slot(k); got != want {
				t.Errorf("bot %q: key %q is in slot %d, want %d", name, k, got, want)
			}
		}
		if s.PressLines("@Chan", "fp") != s.PressLines("@chan", "fp") {
			t.Errorf("bot %q: a channel's press lines depend on the case of its name", name)
		}
	}
	if Bot("pages").UpdatesLease() == Bot("status").UpdatesLease() {
		t.Error("two bots share one updates lease")
	}
}
