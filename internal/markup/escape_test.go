package markup

import (
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
)

func TestEscapeRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(42))
	inputs := []string{"", mdReserved, `<>&"'`, "&amp; &lt; &#128512;", "😀 e\u0301 👩\u200d💻 🇺🇦", "\r\n\t\x00\x7f", "\\", "\xff\xfe", ">quote\n>more||"}
	for i := 0; i < 2000; i++ {
		inputs = append(inputs, randPlain(r, 40))
	}
	for _, mode := range []Mode{None, HTML, MarkdownV2} {
		for _, s := range inputs {
			esc := Escape(s, mode)
			if err := Validate(esc, mode); err != nil {
				t.Fatalf("Escape(%q, %s) = %q does not validate: %v", s, mode, esc, err)
			}
			if got, _ := Plain(esc, mode); got != s {
				t.Fatalf("Plain(Escape(%q, %s)) = %q", s, mode, got)
			}
			if n, _ := VisibleLen(esc, mode); n != UTF16Len(s) {
				t.Fatalf("VisibleLen(Escape(%q, %s)) = %d, want %d", s, mode, n, UTF16Len(s))
			}
		}
	}
}

func TestEscapeRoundTripQuick(t *testing.T) {
	t.Parallel()
	f := func(s string, m uint8) bool {
		mode := []Mode{None, HTML, MarkdownV2}[m%3]
		got, err := Plain(Escape(s, mode), mode)
		return err == nil && got == s
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

func TestEscapeMarkdownV2EveryReservedCharacter(t *testing.T) {
	t.Parallel()
	got := EscapeMarkdownV2("_*[]()~`>#+-=|{}.!\\")
	want := `\_\*\[\]\(\)\~\` + "`" + `\>\#\+\-\=\|\{\}\.\!\\`
	if got != want {
		t.Fatalf("EscapeMarkdownV2 = %q, want %q", got, want)
	}
	if s := "plain text 123 é😀"; EscapeMarkdownV2(s) != s {
		t.Fatalf("EscapeMarkdownV2 changed %q", s)
	}
}

func TestEscapeHTML(t *testing.T) {
	t.Parallel()
	if got, want := EscapeHTML(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c'"; got != want {
		t.Fatalf("EscapeHTML = %q, want %q", got, want)
	}
	// Escaped text is also safe inside a double-quoted attribute.
	href := `https://example.com/?q="x"&y=<z>`
	d, err := parse(`<a href="`+EscapeHTML(href)+`">x</a>`, HTML)
	if err != nil || d.ents[0].arg != href {
		t.Fatalf("href round trip failed: %v", err)
	}
}

func TestEscapeNone(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"<b>", "*x*", strings.Repeat("&", 3)} {
		if Escape(s, None) != s {
			t.Errorf("Escape(%q, None) changed the text", s)
		}
	}
}
