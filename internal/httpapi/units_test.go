package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
)

// unitsOf counts raw, a JSON string's bytes between its quotes, as the
// scanner does.
func unitsOf(raw string) int {
	var u utf16Units
	escaped := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		u.add(c, escaped)
		escaped = !escaped && c == '\\'
	}
	return u.n
}

// TestUTF16UnitsNeverOverCount: the count as the bytes arrive is exact
// for text without 4-byte UTF-8 sequences, and never more than the
// decoded string's UTF-16 length, whatever the bytes (escapes, emoji,
// invalid UTF-8).
func TestUTF16UnitsNeverOverCount(t *testing.T) {
	t.Parallel()
	decoded := func(raw string) (int, bool) {
		var s string
		if json.Unmarshal([]byte(`"`+raw+`"`), &s) != nil {
			return 0, false
		}
		return len(utf16.Encode([]rune(s))), true
	}
	for _, c := range []struct {
		raw   string
		exact bool
	}{
		{"hello", true},
		{`a\"b\\c\n\t\/`, true},
		{`\u0041\u00e9\u20ac`, true},
		{`\ud83d\ude00`, true},
		{"Zürich €", true},
		{"{{" + strings.Repeat("{{", 100), true},
		{"😀 emoji", false},
		{"\xff\xfe\x80abc\xc3", false},
	} {
		want, ok := decoded(c.raw)
		got := unitsOf(c.raw)
		if !ok || got > want || c.exact && got != want {
			t.Errorf("%q: counted %d, decoded %d units (valid: %v)", c.raw, got, want, ok)
		}
	}
	pieces := []string{"a", "é", "€", "😀", `\n`, `\"`, `\\`, `\u0041`, `\ud83d`, `\ude00`, "\xff", "\x80", "\xf0\x9f", " ", "{{"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		raw := b.String()
		if want, ok := decoded(raw); ok && unitsOf(raw) > want {
			t.Fatalf("%q: counted %d, decoded %d units", raw, unitsOf(raw), want)
		}
	}
}
