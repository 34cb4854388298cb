package markup

import (
	"strconv"
	"strings"
)

// htmlTags lists the start tags Telegram accepts.
var htmlTags = map[string]kind{
	"b": kBold, "strong": kBold,
	"i": kItalic, "em": kItalic,
	"u": kUnderline, "ins": kUnderline,
	"s": kStrike, "strike": kStrike, "del": kStrike,
	"tg-spoiler": kSpoiler, "span": kSpoiler,
	"a":          kLink,
	"tg-emoji":   kEmoji,
	"code":       kCode,
	"pre":        kPre,
	"blockquote": kQuote,
}

// isSpace matches the characters Telegram's parser treats as white space
// (NUL included, as the server reads a NUL-terminated string).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0 || c == '\v'
}

// parseHTML parses text with parse_mode HTML.
func parseHTML(s string) (*doc, error) {
	d := &doc{src: s, mode: HTML, toks: make([]token, 0, len(s))}
	badSurrogate := -1
	for i := 0; i < len(s); {
		c := s[i]
		if c == '&' {
			if r, n, ok := decodeHTMLEntity(s, i); ok {
				if r >= 0xd800 && r <= 0xdfff {
					if badSurrogate < 0 {
						badSurrogate = i
					}
					r = 0xfffd
				}
				d.addText(i, i+n, string(r), false)
				i += n
				continue
			}
			d.addText(i, i+1, "&", true)
			i++
			continue
		}
		if c != '<' {
			n := runeLen(s, i)
			d.addText(i, i+n, s[i:i+n], false)
			i += n
			continue
		}
		var err error
		if i+1 < len(s) && s[i+1] == '/' {
			i, err = d.htmlEndTag(s, i)
		} else {
			i, err = d.htmlStartTag(s, i)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(d.stack) > 0 {
		e := d.top()
		return nil, parseErr(e.start, `Can't find end tag corresponding to start tag "`+e.tag+`"`)
	}
	if badSurrogate >= 0 {
		return nil, parseErr(badSurrogate, "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units")
	}
	return d, nil
}

// htmlStartTag parses the start tag at s[begin] == '<' and returns the offset after it.
func (d *doc) htmlStartTag(s string, begin int) (int, error) {
	j := begin + 1
	for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
		j++
	}
	if j >= len(s) {
		return 0, parseErr(begin, "Unclosed start tag")
	}
	name := strings.ToLower(s[begin+1 : j])
	k, ok := htmlTags[name]
	if !ok {
		return 0, parseErr(begin, `Unsupported start tag "`+name+`"`)
	}
	e := entity{kind: k, tag: name}
	j, err := htmlAttributes(s, begin, j, &e)
	if err != nil {
		return 0, err
	}
	if name == "span" && e.arg != "spoiler" {
		return 0, parseErr(begin, `Tag "span" must have class "tg-spoiler"`)
	}
	if name == "a" && e.arg == "" {
		e.noURL = true
	}
	d.open(e, begin, j+1)
	return j + 1, nil
}

// htmlAttributes reads the attributes of the start tag at s[begin], from
// s[j] to its '>', into e, and returns the offset of that '>'. Telegram
// accepts any attribute and keeps only those its entities use.
func htmlAttributes(s string, begin, j int, e *entity) (int, error) {
	for j < len(s) && s[j] != '>' {
		j = skipSpace(s, j)
		if j < len(s) && s[j] == '>' {
			break
		}
		nameStart := j
		for j < len(s) && !isSpace(s[j]) && strings.IndexByte(`=>/"'`, s[j]) < 0 {
			j++
		}
		attr := s[nameStart:j]
		if attr == "" {
			return 0, parseErr(begin, `Empty attribute name in the tag "`+e.tag+`"`)
		}
		j = skipSpace(s, j)
		if j >= len(s) {
			return 0, parseErr(begin, `Unclosed start tag "`+e.tag+`"`)
		}
		if s[j] != '=' {
			if e.tag == "blockquote" && attr == "expandable" {
				e.expandable = true
			}
			continue
		}
		j = skipSpace(s, j+1)
		if j >= len(s) {
			return 0, parseErr(begin, `Unclosed start tag "`+e.tag+`"`)
		}
		value, next, err := htmlAttrValue(s, j)
		if err != nil {
			return 0, err
		}
		j = next
		if j >= len(s) {
			return 0, parseErr(begin, "Unclosed start tag")
		}
		e.setHTMLAttr(attr, value)
	}
	return j, nil
}

// setHTMLAttr records on e an attribute with a value, when its tag uses it;
// any other attribute is accepted and ignored.
func (e *entity) setHTMLAttr(attr, value string) {
	name := e.tag
	switch {
	case name == "a" && attr == "href":
		e.arg = value
	case name == "code" && attr == "class" && strings.HasPrefix(value, "language-"):
		e.arg = value[len("language-"):]
	case name == "span" && attr == "class" && strings.HasPrefix(value, "tg-"):
		e.arg = value[len("tg-"):]
	case name == "tg-emoji" && attr == "emoji-id":
		e.arg = value
	case name == "blockquote" && attr == "expandable":
		e.expandable = true
	}
}

// htmlAttrValue reads the attribute value at s[j], quoted or not, and
// returns it with the offset after it.
func htmlAttrValue(s string, j int) (string, int, error) {
	if q := s[j]; q == '"' || q == '\'' {
		value, next := htmlQuotedValue(s, j)
		return value, next, nil
	}
	tokStart := j
	for j < len(s) && (isAlnum(s[j]) || s[j] == '.' || s[j] == '-') {
		j++
	}
	value := strings.ToLower(s[tokStart:j])
	if j < len(s) && !isSpace(s[j]) && s[j] != '>' {
		return "", 0, parseErr(tokStart, "Unexpected end of name token")
	}
	return value, j, nil
}

// htmlQuotedValue reads the quoted value at s[j] (the quote), decoding
// character references, and returns it with the offset after the closing
// quote (or len(s) when there is none).
func htmlQuotedValue(s string, j int) (string, int) {
	q := s[j]
	j++
	var b strings.Builder
	for j < len(s) && s[j] != q {
		if s[j] == '&' {
			if r, n, ok := decodeHTMLEntity(s, j); ok {
				b.WriteRune(r)
				j += n
				continue
			}
		}
		b.WriteByte(s[j])
		j++
	}
	if j < len(s) {
		j++
	}
	return b.String(), j
}

// skipSpace returns the offset of the first non-space byte at or after s[j].
func skipSpace(s string, j int) int {
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j
}

// htmlEndTag parses the end tag at s[begin:] == "</" and returns the offset after it.
func (d *doc) htmlEndTag(s string, begin int) (int, error) {
	if len(d.stack) == 0 {
		return 0, parseErr(begin, "Unexpected end tag")
	}
	j := begin + 2
	for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
		j++
	}
	name := strings.ToLower(s[begin+2 : j])
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != '>' {
		return 0, parseErr(begin, "Unclosed end tag")
	}
	e := d.top()
	if name != "" && name != e.tag {
		return 0, parseErr(begin, `Unmatched end tag, expected "</`+e.tag+`>", found "</`+name+`>"`)
	}
	if e.kind == kEmoji && d.nText > e.textAt {
		if id, err := strconv.ParseInt(e.arg, 10, 64); err != nil || id == 0 {
			return 0, parseErr(e.start, "Invalid custom emoji identifier specified")
		}
	}
	d.closeTop(begin, j+1)
	return j + 1, nil
}

// decodeHTMLEntity decodes the character reference at s[i] == '&' the way
// Telegram does: &lt; &gt; &amp; &quot; and numeric references, with the ';'
// optional. It returns the character and the number of bytes consumed.
func decodeHTMLEntity(s string, i int) (rune, int, bool) {
	j := i + 1
	var r rune
	if j < len(s) && s[j] == '#' {
		j++
		if j < len(s) && s[j] == 'x' {
			j++
			for j < len(s) && isHex(s[j]) {
				if r < 0x1000000 {
					r = r*16 + rune(hexVal(s[j]))
				}
				j++
			}
		} else {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				if r < 0x1000000 {
					r = r*10 + rune(s[j]-'0')
				}
				j++
			}
		}
		if r == 0 || r >= 0x10ffff || j-i >= 10 {
			return 0, 0, false
		}
	} else {
		for j < len(s) && isAlpha(s[j]) {
			j++
		}
		switch s[i+1 : j] {
		case "lt":
			r = '<'
		case "gt":
			r = '>'
		case "amp":
			r = '&'
		case "quot":
			r = '"'
		default:
			return 0, 0, false
		}
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	return r, j - i, true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
func isHex(c byte) bool   { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func hexVal(c byte) int {
	if c <= '9' {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}
