package inbound

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/markup"
)

// Marked text. The converters (text.go) write what they read as plain text
// with style marks in it: Unicode noncharacters, which no sender's text
// keeps (sanitize replaces them). Every step between conversion and
// dispatch (first lines, joins, trims) works on marked text as on plain
// text; finishText then turns an alert's marked title into plain text and
// its marked body into both plain text (Body) and Telegram HTML
// (BodyHTML). A cut may leave a mark without its pair: the HTML writer
// drops such a mark, and nests what it writes properly whatever the marks
// say, so the HTML is always valid.

// style is one kind of formatting.
type style uint8

const (
	stBold style = iota
	stItalic
	stUnderline
	stStrike
	stSpoiler
	stCode
	stPre
	stLink
	numStyles
)

// Marks: markOpen+style starts a style, markClose+style ends it. A link's
// start is followed by its URL and markURLEnd, then its label.
const (
	markOpen   rune = 0xFDD0
	markClose  rune = 0xFDE0
	markURLEnd rune = 0xFDEF
)

// htmlTag is the Telegram HTML tag of each style.
var htmlTag = [numStyles]string{"b", "i", "u", "s", "tg-spoiler", "code", "pre", "a"}

func isMark(r rune) bool { return r >= markOpen && r <= markURLEnd }

// sanitize replaces any mark a sender wrote with U+FFFD.
func sanitize(s string) string {
	if !strings.ContainsFunc(s, isMark) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isMark(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// wrap surrounds marked text with a style.
func wrap(st style, s string) string {
	if s == "" {
		return ""
	}
	return string(markOpen+rune(st)) + s + string(markClose+rune(st))
}

// linkTo is a link to target labelled label (marked text). The plain text
// shows "label (target)", or the target alone when the label is it.
func linkTo(target, label string) string {
	if strings.TrimSpace(plainOf(label)) == "" {
		label = strings.TrimPrefix(target, "mailto:")
	}
	return string(markOpen+rune(stLink)) + sanitize(target) + string(markURLEnd) + label + string(markClose+rune(stLink))
}

// linkable reports whether Telegram keeps a link to u.
func linkable(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" && p.Scheme != "mailto" {
		return false
	}
	switch p.Scheme {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// finishText turns an alert's marked text into its Title, Body and
// BodyHTML. BodyHTML is left empty when the body holds no formatting or
// is longer than alerts.MaxBodyLen (webhooks.Fit then cuts the plain one).
func finishText(a *alerts.Alert) {
	a.Title = plainOf(a.Title)
	if !strings.ContainsFunc(a.Body, isMark) {
		return
	}
	body := strings.TrimSpace(a.Body)
	a.Body = strings.TrimSpace(plainOf(body))
	if utf8.RuneCountInString(a.Body) <= alerts.MaxBodyLen {
		a.BodyHTML = htmlOf(body)
	}
}

// plainOf returns marked text as plain text: marks dropped, links as
// "label (url)", or the URL alone when the label is empty or the URL.
func plainOf(s string) string {
	if !strings.ContainsFunc(s, isMark) {
		return s
	}
	type link struct {
		target string
		at     int // where its label starts in b
	}
	var b strings.Builder
	b.Grow(len(s))
	var links []link
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == markOpen+rune(stLink):
			end := strings.IndexRune(s[i:], markURLEnd)
			if end < 0 {
				continue
			}
			links = append(links, link{target: s[i : i+end], at: b.Len()})
			i += end + len(string(markURLEnd))
		case r == markClose+rune(stLink):
			if len(links) == 0 {
				continue
			}
			l := links[len(links)-1]
			links = links[:len(links)-1]
			switch label := b.String()[l.at:]; {
			case strings.TrimSpace(label) == "":
				b.WriteString(strings.TrimPrefix(l.target, "mailto:"))
			case label != l.target && label != strings.TrimPrefix(l.target, "mailto:"):
				b.WriteString(" (" + l.target + ")")
			}
		case isMark(r):
		default:
			b.WriteString(s[i-n : i])
		}
	}
	return b.String()
}

// htmlWriter writes marked text as Telegram HTML.
type htmlWriter struct {
	b     strings.Builder
	open  []style  // the styles written open, outermost first
	hrefs []string // the URLs of the links in open, in order
	skip  [numStyles]int
}

// htmlOf returns marked text as Telegram HTML: every character escaped,
// every tag closed and nested in the one around it. A style opened inside
// itself, anything opened inside code or pre, a pre inside another style
// and a link to a URL Telegram would drop are left out with their closing
// mark (the text stays); a closing mark without its opening is dropped.
func htmlOf(s string) string {
	w := &htmlWriter{}
	w.b.Grow(len(s) + len(s)/4)
	from := 0 // the text not written yet starts there
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isMark(r) {
			i += n
			continue
		}
		w.text(s[from:i])
		i += n
		switch {
		case r >= markOpen && r < markOpen+rune(numStyles):
			i = w.start(style(r-markOpen), s, i)
		case r >= markClose && r < markClose+rune(numStyles):
			w.end(style(r - markClose))
		}
		from = i
	}
	w.text(s[from:])
	for len(w.open) > 0 {
		w.pop()
	}
	return w.b.String()
}

// has reports whether st is open.
func (w *htmlWriter) has(st style) bool {
	for _, o := range w.open {
		if o == st {
			return true
		}
	}
	return false
}

// start opens st; s[i:] follows the mark (a link's URL). It returns where
// the text goes on.
func (w *htmlWriter) start(st style, s string, i int) int {
	href := ""
	if st == stLink {
		end := strings.IndexRune(s[i:], markURLEnd)
		if end < 0 {
			w.skip[st]++
			return i
		}
		href, i = s[i:i+end], i+end+len(string(markURLEnd))
	}
	inCode := w.has(stCode) || w.has(stPre)
	if w.has(st) || inCode || st == stPre && len(w.open) > 0 || st == stLink && !linkable(href) {
		w.skip[st]++
		return i
	}
	w.open = append(w.open, st)
	if st == stLink {
		w.hrefs = append(w.hrefs, href)
	}
	w.tag(st, len(w.hrefs)-1)
	return i
}

// tag writes the start tag of st (the link's href is hrefs[h]).
func (w *htmlWriter) tag(st style, h int) {
	if st == stLink {
		w.b.WriteString(`<a href="` + markup.EscapeHTML(w.hrefs[h]) + `">`)
		return
	}
	w.b.WriteString("<" + htmlTag[st] + ">")
}

// end closes st and reopens what was opened inside it.
func (w *htmlWriter) end(st style) {
	if w.skip[st] > 0 {
		w.skip[st]--
		return
	}
	if !w.has(st) {
		return
	}
	var inner []style
	var innerHrefs []string
	for {
		top := w.open[len(w.open)-1]
		if top == stLink {
			innerHrefs = append(innerHrefs, w.hrefs[len(w.hrefs)-1])
		}
		w.pop()
		if top == st {
			break
		}
		inner = append(inner, top)
	}
	if st == stLink {
		innerHrefs = innerHrefs[:len(innerHrefs)-1]
	}
	for j := len(inner) - 1; j >= 0; j-- {
		w.open = append(w.open, inner[j])
		if inner[j] == stLink {
			w.hrefs = append(w.hrefs, innerHrefs[len(innerHrefs)-1])
			innerHrefs = innerHrefs[:len(innerHrefs)-1]
		}
		w.tag(inner[j], len(w.hrefs)-1)
	}
}

// pop closes the innermost style.
func (w *htmlWriter) pop() {
	top := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	if top == stLink {
		w.hrefs = w.hrefs[:len(w.hrefs)-1]
	}
	w.b.WriteString("</" + htmlTag[top] + ">")
}

// text writes visible text, escaped.
func (w *htmlWriter) text(s string) { w.b.WriteString(markup.EscapeHTML(s)) }
