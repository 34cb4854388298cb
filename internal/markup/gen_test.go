package markup

import (
	"math/rand"
	"strings"
)

// textPool holds characters random documents are built from: ASCII, every
// character that is special in some mode, white space, multi-byte runes,
// surrogate pairs, combining marks and joined emoji.
var textPool = []string{
	"a", "b", "c", "x", "y", "z", "0", "7", " ", " ", " ", " ", "\n", "\n\n", "\t", "\r",
	"_", "*", "[", "]", "(", ")", "~", "`", ">", "#", "+", "-", "=", "|", "{", "}", ".", "!", "\\",
	"&", "<", "\"", "'", ";", "/",
	"é", "ß", "Ж", "中", "€", "😀", "👍", "🇺🇦", "e\u0301", "👩\u200d💻", "1\ufe0f\u20e3", "👋🏽", "𝄞",
}

// randPlain returns a random string of up to n pool entries, sometimes with a
// long word that has no spaces.
func randPlain(r *rand.Rand, n int) string {
	var b strings.Builder
	if r.Intn(8) == 0 {
		w := 20 + r.Intn(200)
		for i := 0; i < w; i++ {
			b.WriteByte(byte('a' + r.Intn(26)))
		}
	}
	for i := r.Intn(n + 1); i > 0; i-- {
		b.WriteString(textPool[r.Intn(len(textPool))])
	}
	return b.String()
}

// randLine is randPlain without line breaks.
func randLine(r *rand.Rand, n int) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(randPlain(r, n))
}

// genHTML builds a random valid HTML document.
func genHTML(r *rand.Rand, depth int) string {
	var b strings.Builder
	for i := 1 + r.Intn(6); i > 0; i-- {
		switch k := r.Intn(22); {
		case k < 8 || depth <= 0:
			s := EscapeHTML(randPlain(r, 30))
			if r.Intn(4) == 0 {
				s = strings.ReplaceAll(s, "&amp;", "&") // bare '&' is taken literally
				s = strings.ReplaceAll(s, "&gt;", ">")  // and so is '>'
			}
			if r.Intn(6) == 0 {
				s += []string{"&#128512;", "&#x1F600;", "&#38;", "&#x3c;", "&lt", "&quot;"}[r.Intn(6)]
			}
			b.WriteString(s)
		case k < 17:
			tags := []string{"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "tg-spoiler"}
			tag := tags[r.Intn(len(tags))]
			open := "<" + tag + ">"
			switch r.Intn(6) {
			case 0:
				tag, open = "span", `<span class="tg-spoiler">`
			case 1:
				tag = "a"
				open = `<a href="https://example.com/` + EscapeHTML(randLine(r, 4)) + `">`
				if r.Intn(3) == 0 {
					open = "<a>"
				}
			case 2:
				tag, open = "blockquote", []string{"<blockquote>", "<blockquote expandable>"}[r.Intn(2)]
			}
			b.WriteString(open + genHTML(r, depth-1) + "</" + tag + ">")
		case k < 19:
			b.WriteString("<code>" + EscapeHTML(randPlain(r, 40)) + "</code>")
		case k < 21:
			if r.Intn(2) == 0 {
				b.WriteString("<pre>" + EscapeHTML(randPlain(r, 60)) + "</pre>")
			} else {
				b.WriteString(`<pre><code class="language-go">` + EscapeHTML(randPlain(r, 60)) + "</code></pre>")
			}
		default:
			b.WriteString(`<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`)
		}
	}
	return b.String()
}

// genMarkdownV2 builds a random MarkdownV2 document. A few documents come out
// invalid (for example "_" directly followed by "__"); tests skip those.
func genMarkdownV2(r *rand.Rand, depth int, top bool) string {
	var b strings.Builder
	for i := 1 + r.Intn(6); i > 0; i-- {
		switch k := r.Intn(24); {
		case k < 8 || depth <= 0:
			joinMarkers(&b, EscapeMarkdownV2(randPlain(r, 30)))
		case k < 17:
			marks := []string{"*", "_", "__", "~", "||"}
			m := marks[r.Intn(len(marks))]
			inner := genMarkdownV2(r, depth-1, false)
			if r.Intn(5) == 0 {
				b.WriteString("[" + inner + "](https://example.com/" + escapeMarkdownV2URL(randLine(r, 4)) + ")")
				continue
			}
			if r.Intn(8) == 0 {
				b.WriteString("[" + EscapeMarkdownV2(randLine(r, 8)) + "]")
				continue
			}
			joinMarkers(&b, m)
			joinMarkers(&b, inner)
			joinMarkers(&b, m)
		case k < 19:
			b.WriteString("`" + escapeMarkdownV2Code(randPlain(r, 40)) + "`")
		case k < 21:
			lang := []string{"", "go", "python"}[r.Intn(3)]
			b.WriteString("```" + lang + "\n" + escapeMarkdownV2Code(randPlain(r, 60)) + "```")
		case k < 22:
			b.WriteString("![👍](tg://emoji?id=5368324170671202286)")
		case !top:
			b.WriteString(EscapeMarkdownV2(randPlain(r, 10)))
		default:
			// A block quotation on its own lines, sometimes inside an
			// entity that starts before it and ends after it.
			wrap := ""
			if r.Intn(4) == 0 {
				wrap = []string{"*", "_", "~", "||"}[r.Intn(4)]
			}
			joinMarkers(&b, wrap)
			b.WriteString("\n")
			if r.Intn(3) == 0 {
				b.WriteString("**")
			}
			lines := 1 + r.Intn(4)
			for l := 0; l < lines; l++ {
				b.WriteString(">")
				b.WriteString(genMarkdownV2Line(r, depth-1))
				if l < lines-1 {
					b.WriteString("\n")
				}
			}
			if r.Intn(2) == 0 {
				b.WriteString("||")
			}
			b.WriteString("\n" + wrap)
		}
	}
	return b.String()
}

// joinMarkers appends s to b, with a letter between them when b ends and s
// starts with a character that forms entity markers, so that the generator
// does not produce accidental "___" or "||||" sequences.
func joinMarkers(b *strings.Builder, s string) {
	const markers = "_*~|"
	cur := b.String()
	if s == "" || cur != "" && strings.IndexByte(markers, cur[len(cur)-1]) >= 0 && strings.IndexByte(markers, s[0]) >= 0 {
		b.WriteString("q")
	}
	b.WriteString(s)
}

// genMarkdownV2Line builds inline MarkdownV2 content without line breaks.
func genMarkdownV2Line(r *rand.Rand, depth int) string {
	var b strings.Builder
	for i := 1 + r.Intn(4); i > 0; i-- {
		if depth <= 0 || r.Intn(2) == 0 {
			joinMarkers(&b, EscapeMarkdownV2(randLine(r, 20)))
			continue
		}
		m := []string{"*", "_", "__", "~", "||"}[r.Intn(5)]
		joinMarkers(&b, m)
		joinMarkers(&b, genMarkdownV2Line(r, depth-1))
		joinMarkers(&b, m)
	}
	return b.String()
}

// genDoc builds a random document for mode.
func genDoc(r *rand.Rand, mode Mode) string {
	var parts []string
	for n := 1 + r.Intn(4); n > 0; n-- {
		switch mode {
		case HTML:
			parts = append(parts, genHTML(r, 3))
		case MarkdownV2:
			parts = append(parts, genMarkdownV2(r, 3, true))
		default:
			parts = append(parts, randPlain(r, 200))
		}
	}
	return strings.Join(parts, []string{"\n\n", "\n", " ", ""}[r.Intn(4)])
}
