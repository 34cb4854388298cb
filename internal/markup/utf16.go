package markup

import "unicode/utf8"

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
		n += runeUTF16(r)
		i += size
	}
	return n
}

// runeUTF16 is the number of UTF-16 code units of r.
func runeUTF16(r rune) int {
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
