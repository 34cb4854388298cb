package markup

import (
	"fmt"
	"strings"
)

// Mode is a Telegram parse_mode value. The zero value None means plain text.
type Mode string

// The parse modes this package understands.
const (
	None       Mode = ""           // plain text, no parse_mode
	HTML       Mode = "HTML"       // Telegram's HTML subset
	MarkdownV2 Mode = "MarkdownV2" // Telegram's MarkdownV2 syntax
)

// ParseMode returns the Mode for a user-given string: "", "none", "plain" -> None; "html" -> HTML; "markdownv2" -> MarkdownV2
// (case-insensitive). Legacy "Markdown" is rejected with an error that says to use MarkdownV2.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none", "plain":
		return None, nil
	case "html":
		return HTML, nil
	case "markdownv2":
		return MarkdownV2, nil
	case "markdown":
		return None, fmt.Errorf("parse mode %q is Telegram's legacy Markdown, which is not supported: use \"MarkdownV2\" (escape reserved characters with '\\') or \"HTML\"", s)
	default:
		return None, fmt.Errorf("unknown parse mode %q: use \"HTML\", \"MarkdownV2\" or \"none\"", s)
	}
}

// valid reports whether m is one of the modes this package implements.
func (m Mode) valid() bool {
	return m == None || m == HTML || m == MarkdownV2
}

// errUnknownMode is returned when a Mode value was built by hand instead of by
// ParseMode or the constants.
func errUnknownMode(m Mode) error {
	return fmt.Errorf("markup: unknown mode %q: use markup.None, markup.HTML or markup.MarkdownV2 (see ParseMode)", string(m))
}
