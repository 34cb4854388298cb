package digest

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// ellipsis ends a shortened text.
const ellipsis = "…"

// cleanTitle makes a title one line of valid, printable text: control
// characters and line breaks become spaces.
func cleanTitle(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isControl(r) || r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// cleanSummary makes a summary valid, printable text that keeps its line
// breaks: "\r\n" and "\r" become "\n", other control characters spaces.
func cleanSummary(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r == '\n' || r == '\t':
			return r
		case isControl(r):
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// isControl matches C0 and C1 control characters and DEL. Telegram would drop
// or choke on them (a NUL ends the text on its side).
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0)
}

// linkable reports whether u can be a link target in a digest: an absolute
// http or https URL of reasonable length.
func linkable(u string) bool {
	if u == "" || len(u) > jobs.MaxItemURLLen || !utf8.ValidString(u) {
		return false
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// shorten returns s cut to at most max UTF-16 units, "…" included, when it is
// longer. The cut falls between runes (so never inside a surrogate pair),
// never splits an emoji sequence or a character from its combining marks,
// and prefers the end of a word.
func shorten(s string, max int) string {
	if markup.UTF16Len(s) <= max {
		return s
	}
	target := max - markup.UTF16Len(ellipsis)
	if target <= 0 {
		return ellipsis
	}
	units, end := 0, 0
	for i, r := range s {
		n := markup.RuneUTF16Len(r)
		if units+n > target {
			break
		}
		units += n
		end = i + utf8.RuneLen(r)
	}
	// Step back over a cluster the cut would split.
	for end > 0 && end < len(s) {
		next, _ := utf8.DecodeRuneInString(s[end:])
		prev, size := utf8.DecodeLastRuneInString(s[:end])
		if !joinsPrevious(next) && prev != zwj {
			break
		}
		end -= size
	}
	head := s[:end]
	// Prefer a word boundary in the last third of the kept text.
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 && i >= len(head)*2/3 {
		head = head[:i]
	}
	head = strings.TrimRightFunc(head, unicode.IsSpace)
	return head + ellipsis
}

// zwj is the zero width joiner of emoji sequences.
const zwj = '\u200d'

// joinsPrevious reports whether r belongs to the character before it:
// joiners, variation selectors, emoji modifiers and tags, combining marks.
func joinsPrevious(r rune) bool {
	switch {
	case r == zwj,
		r >= 0xfe00 && r <= 0xfe0f,   // variation selectors
		r >= 0x1f3fb && r <= 0x1f3ff, // skin tone modifiers
		r >= 0xe0020 && r <= 0xe007f, // tag sequences
		r >= 0x20d0 && r <= 0x20ff:   // combining marks for symbols
		return true
	}
	return r >= 0x300 && unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}
