package feeds

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// plainText turns an HTML fragment (or plain text, which is a fragment too)
// into readable plain text: tags dropped, entities decoded, scripts and
// styles removed, block elements and <br> turned into line breaks, runs of
// spaces collapsed and blank lines limited to one.
func plainText(fragment string) string { return toText(fragment, false) }

// toText is plainText; with keepUnknown, tags that are not HTML elements
// (as in a title "Vec<T> in Rust") are kept as written.
func toText(fragment string, keepUnknown bool) string {
	if !strings.ContainsAny(fragment, "<&") {
		return tidy(fragment)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(fragment))
	skip := 0 // depth inside <script>/<style>
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			raw := string(z.Raw())
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == 0 && keepUnknown {
				if skip == 0 {
					b.WriteString(raw)
				}
				continue
			}
			switch a {
			case atom.Script, atom.Style, atom.Template:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.Br:
				b.WriteString("\n")
			case atom.Li:
				if tt == html.StartTagToken {
					b.WriteString("\n• ")
				}
			case atom.P, atom.Div, atom.Blockquote, atom.Pre, atom.Ul, atom.Ol, atom.Table, atom.Tr,
				atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Hr, atom.Section, atom.Article,
				atom.Header, atom.Footer, atom.Dl, atom.Dt, atom.Dd, atom.Figure, atom.Figcaption:
				b.WriteString("\n\n")
			case atom.Td, atom.Th:
				b.WriteString(" ")
			case atom.Img:
				// An image contributes its alternative text, if any.
				for {
					k, v, more := z.TagAttr()
					if string(k) == "alt" && len(v) > 0 {
						b.WriteString(" ")
						b.Write(v)
						b.WriteString(" ")
					}
					if !more {
						break
					}
				}
			}
		}
	}
}

// tidy collapses horizontal whitespace, trims every line, drops control
// characters and keeps at most one blank line in a row.
func tidy(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var out strings.Builder
	blank := 0
	started := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.FieldsFunc(line, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r)
		}), " ")
		if line == "" {
			blank++
			continue
		}
		if started {
			if blank > 0 {
				out.WriteString("\n\n")
			} else {
				out.WriteString("\n")
			}
		}
		out.WriteString(line)
		started = true
		blank = 0
	}
	return out.String()
}

// titleText is the text of a title, on one line. Titles are usually plain
// text, sometimes with markup: HTML elements are dropped, anything else
// that looks like a tag is kept.
func titleText(fragment string) string {
	return strings.Join(strings.Fields(toText(fragment, true)), " ")
}

// shorten cuts s to at most max runes, at a word boundary when one is
// reasonably close, and marks the cut with an ellipsis.
func shorten(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	// Keep max-1 runes and add the ellipsis.
	end, n := len(s), 0
	for i := range s {
		if n == max-1 {
			end = i
			break
		}
		n++
	}
	head := s[:end]
	if sp := strings.LastIndexAny(head, " \n"); sp > len(head)*3/4 {
		head = head[:sp]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace) + "…"
}
