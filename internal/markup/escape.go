package markup

import "strings"

// Escape makes arbitrary text literal in the given mode, so that Plain of the
// result is s again. For None (and unknown modes) s is returned as is.
func Escape(s string, mode Mode) string {
	switch mode {
	case HTML:
		return EscapeHTML(s)
	case MarkdownV2:
		return EscapeMarkdownV2(s)
	default:
		return s
	}
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// EscapeHTML replaces &, <, > and " by the entities Telegram recognises. The
// result is safe both as element text and inside a double-quoted attribute.
func EscapeHTML(s string) string {
	return htmlEscaper.Replace(s)
}

// EscapeMarkdownV2 puts a '\' before every character MarkdownV2 reserves
// (_ * [ ] ( ) ~ ` > # + - = | { } . !) and before '\' itself.
func EscapeMarkdownV2(s string) string {
	return escapeSet(s, mdReserved)
}

// escapeMarkdownV2URL escapes the characters that are special inside the
// (...) part of a MarkdownV2 link: ')' and '\'.
func escapeMarkdownV2URL(s string) string {
	return escapeSet(s, `)\`)
}

// escapeMarkdownV2Code escapes the characters that are special inside
// MarkdownV2 code and pre entities: '`' and '\'.
func escapeMarkdownV2Code(s string) string {
	return escapeSet(s, "`\\")
}

// escapeSet puts a '\' before every byte of s that occurs in set (ASCII only).
func escapeSet(s, set string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) >= 0 {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n)
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdReserved lists every character EscapeMarkdownV2 escapes.
const mdReserved = "_*[]()~`>#+-=|{}.!\\"
