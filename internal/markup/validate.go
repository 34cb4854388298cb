package markup

import "unicode/utf8"

// parse parses text in mode. For None every rune is a visible character.
func parse(text string, mode Mode) (*doc, error) {
	switch mode {
	case None:
		return parsePlain(text), nil
	case HTML:
		return parseHTML(text)
	case MarkdownV2:
		return parseMarkdownV2(text)
	default:
		return nil, errUnknownMode(mode)
	}
}

// parsePlain turns plain text into one token per rune.
func parsePlain(text string) *doc {
	d := &doc{src: text, mode: None, toks: make([]token, 0, len(text))}
	for i := 0; i < len(text); {
		_, size := utf8.DecodeRuneInString(text[i:])
		d.addText(i, i+size, text[i:i+size], false)
		i += size
	}
	return d
}

// Validate reports whether Telegram can parse the entities of text with the
// given parse_mode. It returns nil or a *ParseError (an unknown mode value
// gives a plain error). It checks markup only: the length limit, empty
// messages and UTF-8 validity are separate checks on Telegram's side (see
// VisibleLen). Like Telegram, it accepts a '&' that starts no entity and a '>'
// outside a tag as literal characters in HTML.
func Validate(text string, mode Mode) error {
	if mode == None {
		return nil
	}
	_, err := parse(text, mode)
	return err
}

// VisibleLen returns the UTF-16 length of the text a user sees (after entity
// parsing), which is what Telegram compares with MaxMessageLen. Telegram also
// drops '\r' characters and trims white space at both ends before it counts,
// so the real length can only be smaller.
func VisibleLen(text string, mode Mode) (int, error) {
	if mode == None {
		return UTF16Len(text), nil
	}
	d, err := parse(text, mode)
	if err != nil {
		return 0, err
	}
	return d.visibleLen(), nil
}

// Plain returns the visible text: entities decoded, escapes resolved, tags and
// markers removed.
func Plain(text string, mode Mode) (string, error) {
	if mode == None {
		return text, nil
	}
	d, err := parse(text, mode)
	if err != nil {
		return "", err
	}
	return d.plain(), nil
}
