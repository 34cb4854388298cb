package producer_test

import (
	"testing"
)

// TestNumericChatAccepted: a chat id may be a JSON number, as Telegram's own
// api takes it (issue 14), and is stored exactly, beyond 2^53 too.
func TestNumericChatAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"chat":42,"text":"x"}`, "42"},
		{`{"chat":-1001234567890,"text":"x"}`, "-1001234567890"},
		{`{"chat":9007199254740993,"text":"x"}`, "9007199254740993"}, // 2^53+1: a float64 would round it
		{`{"chat": 42 ,"text":"x"}`, "42"},
		{`{"chat":"42","text":"x"}`, "42"},
		{`{"chat":"@alerts_channel","text":"x"}`, "@alerts_channel"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			t.Parallel()
			h, b := newTestAPI(t, nil)
			res := accepted(t, post(h, tc.body))
			if m, _ := b.task(t, res.Queue, res.TaskID); m.Chat != tc.want {
				t.Fatalf("stored chat %q, want %q", m.Chat, tc.want)
			}
		})
	}
}

// TestMarkupThatParsesIsAccepted: the API's markup check refuses only what
// Telegram would refuse; plain text is never checked.
func TestMarkupThatParsesIsAccepted(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"chat":42,"text":"<b>disk full</b> on db-1 &amp; a &lt; b","parse_mode":"HTML"}`,
		`{"chat":42,"text":"AT&T > 3","parse_mode":"HTML"}`, // Telegram takes a lone & and > literally
		`{"chat":42,"text":"*disk* full on db\\-1\\.","parse_mode":"MarkdownV2"}`,
		`{"chat":42,"text":"<b>unclosed, but plain text"}`,
		`{"chat":42,"text":"<b>unclosed, but plain text","parse_mode":"none"}`,
	} {
		t.Run(body, func(t *testing.T) {
			t.Parallel()
			h, _ := newTestAPI(t, nil)
			accepted(t, post(h, body))
		})
	}
}

// TestKeysSpelledOnceAreAccepted: labels are data and case-sensitive, so
// keys differing only in case are fine there; so is the same key in two
// different objects.
func TestKeysSpelledOnceAreAccepted(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, nil)
	res := accepted(t, post(h, `{"chat":"42","text":"x","queue":"low","idempotency_key":"k1"}`))
	if m, _ := b.task(t, res.Queue, res.TaskID); m.Chat != "42" || m.IdempotencyKey != "k1" {
		t.Fatalf("stored %+v", m)
	}
}
