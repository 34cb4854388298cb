package httpapi

// utf16Units counts the UTF-16 code units of a JSON string as its bytes
// arrive, never more than the decoded string has, so that a bound on them
// refuses only what the decoder would give longer: an ASCII byte or an
// escape (\n, \uXXXX) is one unit, a UTF-8 lead byte one (a 4-byte
// sequence, two units in UTF-16, is counted one: a lower bound),
// continuation bytes none. Invalid UTF-8 decodes to U+FFFD per bad byte,
// so it counts no more than the decoder gives either.
type utf16Units struct {
	n       int
	hexLeft int // hex digits of a \u escape still to come
}

// add counts byte c of the string (escaped: it follows a backslash) and
// returns the units so far.
func (u *utf16Units) add(c byte, escaped bool) int {
	switch {
	case u.hexLeft > 0:
		u.hexLeft--
	case escaped:
		// The backslash counted the escape's unit.
		if c == 'u' {
			u.hexLeft = 4
		}
	case c < 0x80 || c >= 0xC0:
		u.n++
	}
	return u.n
}
