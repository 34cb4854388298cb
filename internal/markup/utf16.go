package markup

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageLen is Telegram's limit on message text, in UTF-16 code units after entity parsing.
const MaxMessageLen = 4096

// UTF16Len returns the number of UTF-16 code units needed to encode s, which is
// how Telegram measures text. Bytes that are not valid UTF-8 count as one unit
// each (they would be replaced by U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += RuneUTF16Len(r)
		i += size
	}
	return n
}

// RuneUTF16Len is the number of UTF-16 code units of r: 2 outside the Basic
// Multilingual Plane, else 1.
func RuneUTF16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// runeLen returns the byte length of the rune at s[i] (1 for an invalid byte).
func runeLen(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}

// TruncateRunes cuts s to at most n runes, the last of them an ellipsis
// ("…") when anything was cut, with trailing white space before the
// ellipsis removed. For limits counted in characters rather than in
// Telegram's UTF-16 units.
func TruncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRightFunc(s[:i], func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) + "…"
}
