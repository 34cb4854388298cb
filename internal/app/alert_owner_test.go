package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// otherToken is a second sender's token (named "other", send scope).
const otherToken = "other-sender-token-0123456789"

// TestAnotherTokensResolveLeavesTheAlertFiring: token "api" fires a
// critical alert of the db-critical policy (step 2, the on-call DM, due
// 4 s after firing); another send token posts the same key resolved at
// once. The resolution is about an alert of its own: the first alert's
// message gets no reply from it, and step 2 still reaches Alice on time
// (by its due time plus 5 s).
func TestAnotherTokensResolveLeavesTheAlertFiring(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "other.token"), []byte(otherToken), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - name: other\n    scopes: [send]\n    file: other.token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newOnCallStack(t, func(c *settings.Producer) { c.Keyring.TokensFile = tokens })
	fired := time.Now()
	s.alertAs(t, 0, "t", "o1", "db", "firing")
	var first telegramfake.Message
	s.waitFor(t, "the alert's message", func(msgs []telegramfake.Message) bool {
		for _, m := range msgs {
			if m.ChatID == 42 && strings.Contains(m.Text, "disk full o1") && m.ReplyTo == nil {
				first = m
				return true
			}
		}
		return false
	})
	s.alertAs(t, 1, otherToken, "o1", "db", "resolved")
	s.waitFor(t, "step 2 of the first alert", func(msgs []telegramfake.Message) bool {
		return count(msgs, 1001, "Escalated to you: disk full o1") == 1
	})
	if took := time.Since(fired); took > 4*time.Second+5*time.Second {
		t.Errorf("step 2 came %v after firing, want by its due 4s + 5s", took)
	}
	for _, m := range s.fake.Messages() {
		if m.ChatID == 42 && m.ReplyTo != nil && m.ReplyTo.MessageID == first.MessageID && strings.Contains(strings.ToLower(m.Text), "resolved") {
			t.Errorf("the other token's resolution replied to the first alert: %q", m.Text)
		}
	}
	if m, _ := s.fake.Lookup(42, first.MessageID); strings.Contains(strings.ToLower(m.Current().Text), "resolved") {
		t.Errorf("the first alert's message now says resolved: %q", m.Current().Text)
	}
}
