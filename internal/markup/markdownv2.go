package markup

import (
	"net/url"
	"strconv"
	"strings"
)

// mdSpecial lists the bytes that MarkdownV2 treats as markup outside code:
// the reserved characters plus the newline, which ends block quotations.
const mdSpecial = "_*[]()~`>#+-=|{}.!\n"

// mdParser holds the state of one MarkdownV2 parse.
type mdParser struct {
	*doc
	s        string
	quote    int  // entity index of the open block quotation, or -1
	canQuote bool // a '>' here would start (or continue) a block quotation
}

// parseMarkdownV2 parses text with parse_mode MarkdownV2.
func parseMarkdownV2(s string) (*doc, error) {
	p := &mdParser{doc: &doc{src: s, mode: MarkdownV2, toks: make([]token, 0, len(s))}, s: s, quote: -1, canQuote: true}
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] >= 1 && s[i+1] <= 126 {
			p.addText(i, i+2, s[i+1:i+2], false)
			if s[i+1] != '\r' {
				p.canQuote = s[i+1] == '\n'
			}
			i += 2
			continue
		}
		top := p.top()
		special := c != 0 && strings.IndexByte(mdSpecial, c) >= 0
		if top != nil && (top.kind == kCode || top.kind == kPre) {
			special = c == '`'
		}
		if !special {
			n := runeLen(s, i)
			p.addText(i, i+n, s[i:i+n], c == '\\')
			if c != '\r' {
				p.canQuote = false
			}
			i += n
			continue
		}
		var err error
		if top != nil && p.endsEntity(i, top) {
			i, err = p.closeAt(i)
		} else {
			i, err = p.openAt(i)
		}
		if err != nil {
			return nil, err
		}
	}
	if p.quote >= 0 {
		if top := p.top(); top.kind == kSpoiler && top.start == len(s)-2 {
			p.markExpandable()
		}
		if top := p.top(); top != nil && top.kind == kQuote {
			p.closeTop(len(s), len(s))
			p.quote = -1
		}
	}
	if top := p.top(); top != nil {
		return nil, cantFindEnd(top)
	}
	return p.doc, nil
}

// cantFindEnd is the error for an entity that is never closed.
func cantFindEnd(e *entity) *ParseError {
	name := e.kind.name()
	if e.kind == kPre && e.arg != "" {
		name = "PreCode"
	}
	return parseErr(e.start, "Can't find end of "+name+" entity")
}

// reservedErr is the error for a reserved character used outside markup.
func reservedErr(i int, c byte) *ParseError {
	return parseErr(i, "Character '"+string(c)+"' is reserved and must be escaped with the preceding '\\'")
}

// at returns s[i], or 0 past the end (like the server's NUL-terminated string).
func (p *mdParser) at(i int) byte {
	if i < len(p.s) {
		return p.s[i]
	}
	return 0
}

// endsEntity reports whether the special byte at i closes the innermost entity.
func (p *mdParser) endsEntity(i int, top *entity) bool {
	c := p.s[i]
	if p.quote >= 0 && c == '\n' && p.at(i+1) != '>' {
		return true
	}
	switch top.kind {
	case kBold:
		return c == '*'
	case kItalic:
		return c == '_' && p.at(i+1) != '_'
	case kUnderline:
		return c == '_' && p.at(i+1) == '_'
	case kStrike:
		return c == '~'
	case kSpoiler:
		return c == '|' && p.at(i+1) == '|'
	case kLink, kEmoji:
		return c == ']'
	case kCode:
		return c == '`'
	case kPre:
		return c == '`' && p.at(i+1) == '`' && p.at(i+2) == '`'
	}
	return false
}

// openAt handles a special byte at i that does not close an entity.
func (p *mdParser) openAt(i int) (int, error) {
	s := p.s
	c := s[i]
	switch c {
	case '_':
		if p.at(i+1) == '_' {
			p.open(entity{kind: kUnderline}, i, i+2)
			return i + 2, nil
		}
		p.open(entity{kind: kItalic}, i, i+1)
	case '*':
		p.open(entity{kind: kBold}, i, i+1)
	case '~':
		p.open(entity{kind: kStrike}, i, i+1)
	case '|':
		if p.at(i+1) != '|' {
			return 0, reservedErr(i, c)
		}
		p.open(entity{kind: kSpoiler}, i, i+2)
		return i + 2, nil
	case '[':
		p.open(entity{kind: kLink}, i, i+1)
	case '!':
		if p.at(i+1) != '[' {
			return 0, reservedErr(i, c)
		}
		p.open(entity{kind: kEmoji}, i, i+2)
		return i + 2, nil
	case '`':
		if p.at(i+1) != '`' || p.at(i+2) != '`' {
			p.open(entity{kind: kCode}, i, i+1)
			break
		}
		j := i + 3
		for j < len(s) && !isSpace(s[j]) && s[j] != '`' {
			j++
		}
		end, lang := i+3, ""
		if j > i+3 && j < len(s) && s[j] != '`' {
			end, lang = j, s[i+3:j]
		}
		if c := p.at(end); c == '\n' || c == '\r' {
			if n := p.at(end + 1); (n == '\n' || n == '\r') && n != c {
				end += 2
			} else {
				end++
			}
		}
		p.open(entity{kind: kPre, arg: lang}, i, end)
		return end, nil
	case '\n':
		p.addText(i, i+1, "\n", false)
		p.canQuote = true
	case '>':
		if !p.canQuote {
			return 0, reservedErr(i, c)
		}
		if p.quote >= 0 {
			p.hidden(i, i+1, p.quote)
		} else {
			p.quote = p.open(entity{kind: kQuote}, i, i+1)
		}
	default:
		return 0, reservedErr(i, c)
	}
	return i + 1, nil
}

// closeAt closes the innermost entity at i and returns the offset after the markup.
func (p *mdParser) closeAt(i int) (int, error) {
	s := p.s
	top := p.top()
	if s[i] == '\n' && top.kind != kQuote {
		// A block quotation ends here; only an expandability mark "||" may
		// still be open (directly before the newline, or before "\r\n").
		if top.kind != kSpoiler || !(top.start == i-2 || top.start == i-3 && s[i-1] == '\r') {
			return 0, cantFindEnd(top)
		}
		p.markExpandable()
		if top = p.top(); top.kind != kQuote {
			return 0, cantFindEnd(top)
		}
	}
	switch top.kind {
	case kBold, kItalic, kStrike, kCode:
		p.closeTop(i, i+1)
		return i + 1, nil
	case kUnderline, kSpoiler:
		p.closeTop(i, i+2)
		return i + 2, nil
	case kPre:
		p.closeTop(i, i+3)
		return i + 3, nil
	case kLink:
		if p.at(i+1) != '(' {
			top.noURL = true
			p.closeTop(i, i+1)
			return i + 1, nil
		}
		end, link, ok := p.scanURL(i + 2)
		if !ok {
			return 0, parseErr(i+2, "Can't find end of a URL")
		}
		top.arg = link
		p.closeTop(i, end)
		return end, nil
	case kEmoji:
		if p.at(i+1) != '(' {
			return 0, parseErr(i, "Custom emoji entity must contain a tg://emoji URL")
		}
		end, link, ok := p.scanURL(i + 2)
		if !ok {
			return 0, parseErr(i+2, "Can't find end of a custom emoji URL")
		}
		if msg := checkCustomEmojiURL(link); msg != "" {
			return 0, parseErr(i+2, msg)
		}
		p.closeTop(i, end)
		return end, nil
	default: // kQuote, at a newline not followed by '>'
		p.addText(i, i+1, "\n", false)
		p.closeTop(i+1, i+1)
		p.quote = -1
		p.canQuote = true
		return i + 1, nil
	}
}

// scanURL reads the (...) part of a link starting after the '(' at from. It
// returns the offset after the ')', the unescaped URL and whether ')' was found.
func (p *mdParser) scanURL(from int) (int, string, bool) {
	s := p.s
	var b strings.Builder
	j := from
	for j < len(s) && s[j] != ')' {
		if s[j] == '\\' && j+1 < len(s) && s[j+1] >= 1 && s[j+1] <= 126 {
			b.WriteByte(s[j+1])
			j += 2
			continue
		}
		b.WriteByte(s[j])
		j++
	}
	if j >= len(s) {
		return 0, "", false
	}
	return j + 1, b.String(), true
}

// markExpandable turns the spoiler on top of the stack, which directly
// precedes the end of the block quotation, into the quotation's expandability mark.
func (p *mdParser) markExpandable() {
	sp := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	t := p.ents[sp].openTok
	p.toks[t].kind = tHidden
	p.toks[t].ent = p.quote
	p.ents[p.quote].expandable = true
}

// checkCustomEmojiURL validates a tg://emoji?id=... link and returns an error
// message, or "" when the link is usable.
func checkCustomEmojiURL(link string) string {
	const scheme = "tg:"
	if len(link) < len(scheme) || !strings.EqualFold(link[:len(scheme)], scheme) {
		return "Custom emoji URL must have scheme tg"
	}
	rest := strings.TrimLeft(link[len(scheme):], "/")
	host, query, _ := strings.Cut(rest, "?")
	if !strings.EqualFold(strings.TrimRight(host, "/"), "emoji") {
		return `Custom emoji URL must have host "emoji"`
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return "Invalid custom emoji identifier specified"
	}
	id, err := strconv.ParseInt(values.Get("id"), 10, 64)
	if err != nil || id == 0 {
		return "Invalid custom emoji identifier specified"
	}
	return ""
}
