package interact

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/markup"
)

// TestEditText: the lines go below the text, escaped for its parse mode;
// a text that would not leave room for them is cut to fit one message.
func TestEditText(t *testing.T) {
	t.Parallel()
	lines := []string{"✅ Acknowledged by @a_b at 14:02 UTC", "🔕 Silenced for 1h by <x> (until 15:02 UTC)"}
	for _, c := range []struct {
		mode, text, want, wantMode string
	}{
		{"HTML", "<b>FIRING</b> x", "<b>FIRING</b> x\n\n✅ Acknowledged by @a_b at 14:02 UTC\n🔕 Silenced for 1h by &lt;x&gt; (until 15:02 UTC)", "HTML"},
		{"MarkdownV2", "*FIRING* x", "*FIRING* x\n\n✅ Acknowledged by @a\\_b at 14:02 UTC\n🔕 Silenced for 1h by <x\\> \\(until 15:02 UTC\\)", "MarkdownV2"},
		{"", "FIRING x\n", "FIRING x\n\n✅ Acknowledged by @a_b at 14:02 UTC\n🔕 Silenced for 1h by <x> (until 15:02 UTC)", ""},
		{"", "", "✅ Acknowledged by @a_b at 14:02 UTC\n🔕 Silenced for 1h by <x> (until 15:02 UTC)", ""},
		{"HTML", "<b>broken", "<b>broken\n\n✅ Acknowledged by @a_b at 14:02 UTC\n🔕 Silenced for 1h by <x> (until 15:02 UTC)", ""},
	} {
		got, mode := editText(c.text, c.mode, lines, markup.MaxMessageLen)
		if got != c.want || mode != c.wantMode {
			t.Errorf("editText(%q, %q):\n got %q (%q)\nwant %q (%q)", c.text, c.mode, got, mode, c.want, c.wantMode)
		}
	}
	long := "<b>FIRING</b> " + strings.Repeat("word ", 2000)
	got, mode := editText(long, "HTML", lines[:1], markup.MaxMessageLen)
	n, err := markup.VisibleLen(got, markup.Mode(mode))
	if err != nil || n > markup.MaxMessageLen || !strings.HasSuffix(got, lines[0]) || !strings.Contains(got, "…\n\n") {
		t.Errorf("long text: %d visible (%v), ends %q", n, err, got[max(0, len(got)-80):])
	}
	got, _ = editText(long, "HTML", lines[:1], 1024)
	if n, _ := markup.VisibleLen(got, markup.HTML); n > 1024 {
		t.Errorf("caption edit is %d characters long", n)
	}
}

func TestClockAndButtons(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 14, 2, 0, 0, time.UTC)
	if got := clock(now.Add(time.Hour), now); got != "15:02 UTC" {
		t.Errorf("same day: %q", got)
	}
	if got := clock(now.Add(24*time.Hour), now); got != "Mar 2 14:02 UTC" {
		t.Errorf("next day: %q", got)
	}
	s := buttons.Subject{Actions: []string{buttons.Ack, buttons.Silence1h}}
	kb := remainingButtons(s, "r1", true)
	if rows := kb.Rows(); len(rows) != 1 || len(rows[0]) != 1 || rows[0][0].Data != buttons.Data(buttons.Silence1h, "r1") {
		t.Errorf("buttons after an acknowledgement %+v", rows)
	}
	if kb := remainingButtons(buttons.Subject{Actions: []string{buttons.Ack}}, "r1", true); kb != nil {
		t.Errorf("no button left, got %+v", kb)
	}
	if c := silenceComment(strings.Repeat("x", 2000), time.Hour, "123"); len([]rune(c)) > 1024 || !strings.HasSuffix(c, "(Telegram press 123)") {
		t.Errorf("long comment %d characters: ...%q", len([]rune(c)), c[len(c)-40:])
	}
}

// TestConfigsNameTheirFields: each config's problems name the field.
func TestConfigsNameTheirFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want []string
	}{
		{func() error { _, err := newHandler(handlerConfig{}); return err }(), []string{"HandlerConfig.Redis", "HandlerConfig.Bots", "HandlerConfig.Edits"}},
		{func() error { _, err := newPoller(pollerConfig{LeaseTTL: time.Millisecond}); return err }(), []string{"PollerConfig.Redis", "PollerConfig.Tasks", "PollerConfig.LeaseTTL"}},
		{func() error { _, err := newTasks(tasksConfig{}); return err }(), []string{"TasksConfig.Redis"}},
		{func() error { _, err := newReceiver(receiverConfig{Secret: "a b"}); return err }(), []string{"ReceiverConfig.Tasks", "ReceiverConfig.Secret", "ReceiverConfig.Bots"}},
		{func() error {
			_, err := newRegistrar(registrarConfig{BaseURL: "herald.example.com"})
			return err
		}(), []string{"RegistrarConfig.Bots", "RegistrarConfig.BaseURL", "RegistrarConfig.Secret"}},
	} {
		if c.err == nil {
			t.Errorf("no error, want %v", c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(c.err.Error(), w) {
				t.Errorf("error %q does not name %s", c.err, w)
			}
		}
	}
}
