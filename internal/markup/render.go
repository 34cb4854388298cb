package markup

import (
	"slices"
	"strings"
)

// renderer writes the parts of a split document.
type renderer struct {
	d     *doc
	split []bool         // entities that span a cut
	texts map[int]string // visible text of cut links without a URL
}

// maxTextURL caps the length of a link's own text that is repeated as its URL
// when the link is cut; longer texts are not usable as URLs anyway.
const maxTextURL = 2048

// textURL reports whether a cut link e gets its own text as an explicit URL.
func (r *renderer) textURL(e int) bool {
	return r.d.ents[e].noURL && r.split[e] && len(r.linkText(e)) <= maxTextURL
}

// linkText returns the visible text of entity e, computed once.
func (r *renderer) linkText(e int) string {
	if s, ok := r.texts[e]; ok {
		return s
	}
	if r.texts == nil {
		r.texts = make(map[int]string)
	}
	s := r.d.entityText(e)
	r.texts[e] = s
	return s
}

// part renders tokens [from, to) with the entities in open re-opened at the
// start and the entities in close closed at the end.
func (r *renderer) part(from, to int, open, close []int) string {
	if r.d.mode == HTML {
		return r.htmlPart(from, to, open, close)
	}
	return r.mdPart(from, to, open, close)
}

// textSrc returns the markup for a visible character in a part.
func (r *renderer) textSrc(t *token) string {
	if t.lenient {
		return Escape(t.vis, r.d.mode)
	}
	return r.d.src[t.start:t.end]
}

// htmlOpenTag returns the start tag that (re-)opens entity e.
func (r *renderer) htmlOpenTag(e int) string {
	ent := &r.d.ents[e]
	if r.textURL(e) {
		return `<a href="` + EscapeHTML(r.linkText(e)) + `">`
	}
	t := &r.d.toks[ent.openTok]
	return r.d.src[t.start:t.end]
}

// htmlPart renders one HTML part.
func (r *renderer) htmlPart(from, to int, open, close []int) string {
	var b strings.Builder
	for _, e := range open {
		b.WriteString(r.htmlOpenTag(e))
	}
	for i := from; i < to; i++ {
		t := &r.d.toks[i]
		switch t.kind {
		case tText:
			b.WriteString(r.textSrc(t))
		case tOpen:
			b.WriteString(r.htmlOpenTag(t.ent))
		default:
			b.WriteString(r.d.src[t.start:t.end])
		}
	}
	for i := len(close) - 1; i >= 0; i-- {
		b.WriteString("</" + r.d.ents[close[i]].tag + ">")
	}
	return b.String()
}

// mdPiece is a fragment of a MarkdownV2 part.
type mdPiece struct {
	s      string
	marker bool // entity markup (as opposed to visible text)
	pre    int  // entity index + 1 of a re-opened pre block; s is filled in at join time
}

// mdOpenMarker returns the markup that re-opens entity e.
func (r *renderer) mdOpenMarker(e int) string {
	switch r.d.ents[e].kind {
	case kBold:
		return "*"
	case kItalic:
		return "_"
	case kUnderline:
		return "__"
	case kStrike:
		return "~"
	case kSpoiler:
		return "||"
	case kLink:
		return "["
	case kEmoji:
		return "!["
	case kCode:
		return "`"
	case kPre:
		return "```" + r.d.ents[e].arg
	default:
		return ">"
	}
}

// mdCloseMarker returns the markup that closes entity e at a cut.
func (r *renderer) mdCloseMarker(e int) string {
	ent := &r.d.ents[e]
	switch ent.kind {
	case kBold:
		return "*"
	case kItalic:
		return "_"
	case kUnderline:
		return "__"
	case kStrike:
		return "~"
	case kSpoiler:
		return "||"
	case kLink, kEmoji:
		return r.mdLinkClose(e)
	case kCode:
		return "`"
	case kPre:
		return "```"
	default:
		if ent.expandable {
			return "||"
		}
		return ""
	}
}

// mdLinkClose returns the "](url)" markup of a link or custom emoji.
func (r *renderer) mdLinkClose(e int) string {
	ent := &r.d.ents[e]
	if r.textURL(e) {
		return "](" + escapeMarkdownV2URL(r.linkText(e)) + ")"
	}
	t := &r.d.toks[ent.closeTok]
	return r.d.src[t.start:t.end]
}

// mdPart renders one MarkdownV2 part.
//
// A block quotation ends only at a raw newline (or at the end of the text), so
// it needs care when it is still open at the end of the part: if the part
// ends with a raw newline, the entities inside the quotation are closed
// before that newline and the ones around it after it; otherwise the
// entities around the quotation cannot be closed at all and are left out of
// this part (Split avoids such cuts whenever it can).
func (r *renderer) mdPart(from, to int, open, close []int) string {
	d := r.d
	quote := -1 // position of a block quotation in close
	for i, e := range close {
		if d.ents[e].kind == kQuote {
			quote = i
		}
	}
	endsWithNewline := false
	for i := to - 1; i >= from; i-- {
		if t := &d.toks[i]; t.kind == tText {
			endsWithNewline = d.src[t.start:t.end] == "\n"
			break
		}
	}
	var dropped []int // entities around the quotation left out of this part
	if quote > 0 && !endsWithNewline {
		dropped = close[:quote]
		close = close[quote:]
		quote = 0
	}
	isDropped := func(e int) bool { return slices.Contains(dropped, e) }

	pieces := make([]mdPiece, 0, len(open)+(to-from)+len(close)+1)
	for _, e := range open {
		switch {
		case isDropped(e):
		case d.ents[e].kind == kPre:
			pieces = append(pieces, mdPiece{marker: true, pre: e + 1})
		default:
			pieces = append(pieces, mdPiece{s: r.mdOpenMarker(e), marker: true})
		}
	}
	lastText := -1
	for i := from; i < to; i++ {
		t := &d.toks[i]
		src := d.src[t.start:t.end]
		switch t.kind {
		case tText:
			lastText = len(pieces)
			pieces = append(pieces, mdPiece{s: r.textSrc(t)})
		case tOpen:
			if !isDropped(t.ent) {
				pieces = append(pieces, mdPiece{s: src, marker: true})
			}
		case tClose:
			if k := d.ents[t.ent].kind; k == kLink || k == kEmoji {
				src = r.mdLinkClose(t.ent)
			}
			pieces = append(pieces, mdPiece{s: src, marker: true})
		case tHidden:
			if src == ">" && lastText < 0 {
				continue // the re-opened quotation already starts the line
			}
			if src != ">" && d.ents[t.ent].closeTok >= to {
				continue // expandability mark of a quotation that ends in a later part
			}
			pieces = append(pieces, mdPiece{s: src, marker: true})
		}
	}
	closers := func(es []int) []mdPiece {
		out := make([]mdPiece, 0, len(es))
		for i := len(es) - 1; i >= 0; i-- {
			out = append(out, mdPiece{s: r.mdCloseMarker(es[i]), marker: true})
		}
		return out
	}
	if quote >= 0 && endsWithNewline {
		// The newline ends the quotation: close what is inside it first.
		tail := append([]mdPiece(nil), pieces[lastText:]...)
		pieces = append(pieces[:lastText], closers(close[quote:])...)
		pieces = append(pieces, tail...)
		pieces = append(pieces, closers(close[:quote])...)
	} else {
		pieces = append(pieces, closers(close)...)
	}
	return r.joinMarkdownV2(pieces)
}

// joinMarkdownV2 concatenates pieces. Two adjacent markers made of '_' would
// be read as a different italic/underline sequence, so an empty bold entity
// ("**", which Telegram drops) is put between them.
func (r *renderer) joinMarkdownV2(pieces []mdPiece) string {
	var b strings.Builder
	underscore := false
	for i := range pieces {
		p := &pieces[i]
		s := p.s
		if p.pre != 0 {
			// The newline after the language is skipped by the parser; a "\r\n"
			// is used when the content itself starts with '\r', so that the
			// parser does not swallow it as part of the line break.
			nl := "\n"
			for j := i + 1; j < len(pieces); j++ {
				if pieces[j].pre != 0 || pieces[j].s != "" {
					if pieces[j].pre == 0 && pieces[j].s[0] == '\r' {
						nl = "\r\n"
					}
					break
				}
			}
			s = r.mdOpenMarker(p.pre-1) + nl
		}
		if s == "" {
			continue
		}
		if p.marker && underscore && s[0] == '_' {
			b.WriteString("**")
		}
		b.WriteString(s)
		underscore = p.marker && s[len(s)-1] == '_'
	}
	return b.String()
}
