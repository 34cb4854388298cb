package markup

import (
	"strings"
	"unicode/utf8"
)

// kind is the type of a formatting entity.
type kind uint8

// Entity kinds shared by both parse modes.
const (
	kBold kind = iota
	kItalic
	kUnderline
	kStrike
	kSpoiler
	kLink
	kEmoji
	kCode
	kPre
	kQuote
)

// name returns the entity type name Telegram uses in its error messages.
func (k kind) name() string {
	switch k {
	case kBold:
		return "Bold"
	case kItalic:
		return "Italic"
	case kUnderline:
		return "Underline"
	case kStrike:
		return "Strikethrough"
	case kSpoiler:
		return "Spoiler"
	case kLink:
		return "TextUrl"
	case kEmoji:
		return "CustomEmoji"
	case kCode:
		return "Code"
	case kPre:
		return "Pre"
	default:
		return "BlockQuote"
	}
}

// tokKind classifies the pieces a parsed text is cut into.
type tokKind uint8

const (
	// tText is one visible character (a rune, a decoded HTML entity or a
	// MarkdownV2 escape) together with the source bytes that produce it.
	tText tokKind = iota
	// tOpen is markup that starts an entity.
	tOpen
	// tClose is markup that ends an entity (it may be empty in MarkdownV2,
	// where a block quotation ends at a newline).
	tClose
	// tHidden is markup that neither shows nor opens or closes an entity:
	// the '>' that continues a MarkdownV2 block quotation on a new line and
	// the "||" that marks a MarkdownV2 block quotation as expandable.
	tHidden
)

// token is one piece of the source text.
type token struct {
	vis        string // visible text (tText)
	start, end int    // byte range in the source
	ent        int    // entity index (tOpen, tClose, tHidden), else -1
	u16        uint8  // UTF-16 length of vis (0, 1 or 2)
	kind       tokKind
	lenient    bool // tText taken literally although the docs ask for an escape
	glue       bool // tText that should not be separated from the previous one
}

// entity is one formatting entity found by the parser.
type entity struct {
	kind       kind
	tag        string // HTML tag name, lower case
	arg        string // HTML: href, language or emoji id; MarkdownV2 pre: language
	expandable bool   // expandable block quotation
	noURL      bool   // link that uses its own text as the URL
	openTok    int
	closeTok   int
	start      int // byte offset of the opening markup
	textAt     int // visible characters before the entity
}

// doc is a parsed text: the tokens in source order and the entities they refer to.
type doc struct {
	src    string
	mode   Mode
	toks   []token
	ents   []entity
	stack  []int // entities open while parsing
	emojis int   // custom emoji entities on the stack
	nText  int   // visible characters so far
}

// addText appends a visible character produced by src[start:end].
func (d *doc) addText(start, end int, vis string, lenient bool) {
	r, _ := utf8.DecodeRuneInString(vis)
	u := RuneUTF16Len(r)
	if r == utf8.RuneError && len(vis) == 1 {
		u = 1
	}
	glue := false
	if n := len(d.toks); n > 0 {
		glue = d.emojis > 0 && d.toks[n-1].kind == tText || joinsPrevious(r) || d.prevRune() == zwj
	}
	d.nText++
	d.toks = append(d.toks, token{kind: tText, start: start, end: end, ent: -1, vis: vis, u16: uint8(u), lenient: lenient, glue: glue})
}

// prevRune returns the last visible rune added, or -1.
func (d *doc) prevRune() rune {
	for i := len(d.toks) - 1; i >= 0; i-- {
		if d.toks[i].kind == tText {
			r, _ := utf8.DecodeRuneInString(d.toks[i].vis)
			return r
		}
	}
	return -1
}

// open appends markup that starts an entity and pushes it.
func (d *doc) open(e entity, start, end int) int {
	idx := len(d.ents)
	e.openTok = len(d.toks)
	e.closeTok = -1
	e.start = start
	e.textAt = d.nText
	d.ents = append(d.ents, e)
	d.toks = append(d.toks, token{kind: tOpen, start: start, end: end, ent: idx})
	d.stack = append(d.stack, idx)
	if e.kind == kEmoji {
		d.emojis++
	}
	return idx
}

// closeTop appends markup that ends the innermost open entity and pops it.
func (d *doc) closeTop(start, end int) {
	idx := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	d.ents[idx].closeTok = len(d.toks)
	d.toks = append(d.toks, token{kind: tClose, start: start, end: end, ent: idx})
	if d.ents[idx].kind == kEmoji {
		d.emojis--
	}
}

// hidden appends markup without visible effect that belongs to entity ent.
func (d *doc) hidden(start, end, ent int) {
	d.toks = append(d.toks, token{kind: tHidden, start: start, end: end, ent: ent})
}

// top returns the innermost open entity, or nil.
func (d *doc) top() *entity {
	if len(d.stack) == 0 {
		return nil
	}
	return &d.ents[d.stack[len(d.stack)-1]]
}

// plain returns the visible text.
func (d *doc) plain() string {
	var b strings.Builder
	b.Grow(len(d.src))
	for i := range d.toks {
		if d.toks[i].kind == tText {
			b.WriteString(d.toks[i].vis)
		}
	}
	return b.String()
}

// visibleLen returns the UTF-16 length of the visible text.
func (d *doc) visibleLen() int {
	n := 0
	for i := range d.toks {
		n += int(d.toks[i].u16)
	}
	return n
}

// entityText returns the visible text inside entity idx.
func (d *doc) entityText(idx int) string {
	e := &d.ents[idx]
	var b strings.Builder
	for i := e.openTok + 1; i < e.closeTok; i++ {
		if d.toks[i].kind == tText {
			b.WriteString(d.toks[i].vis)
		}
	}
	return b.String()
}
