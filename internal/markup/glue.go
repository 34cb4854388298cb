package markup

import "unicode"

// zwj is the zero width joiner that glues emoji sequences together.
const zwj = '\u200d'

// joinsPrevious reports whether r belongs to the same user-perceived character
// as the rune before it (combining marks, joiners, variation selectors, emoji
// modifiers and tags), so that Split avoids cutting in front of it.
func joinsPrevious(r rune) bool {
	switch {
	case r == zwj:
		return true
	case r >= 0xfe00 && r <= 0xfe0f: // variation selectors
		return true
	case r >= 0x1f3fb && r <= 0x1f3ff: // emoji skin tone modifiers
		return true
	case r >= 0xe0020 && r <= 0xe007f: // emoji tag sequences
		return true
	case r >= 0x20d0 && r <= 0x20ff: // combining marks for symbols (keycaps)
		return true
	}
	return r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}
