package botapi

import (
	"fmt"
	"strings"

	"github.com/herald-dev/herald/internal/markup"
)

// legacyMarkdown rewrites a text in Telegram's legacy Markdown (parse_mode
// "Markdown") as HTML, which Herald carries; the error is Telegram's
// description of a text it would not parse. The rules are the Bot API's:
// *bold*, _italic_, `code`, ```pre``` (a language may follow the opening
// backticks), [text](URL); entities do not nest and take no escapes; a
// backslash outside one makes the next _ * ` or [ literal; [text] without
// a (URL) is the text alone.
func legacyMarkdown(text string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' && i+1 < len(text) && strings.IndexByte("_*`[", text[i+1]) >= 0 {
			i++
			b.WriteString(markup.EscapeHTML(text[i : i+1]))
			continue
		}
		if strings.IndexByte("_*`[", c) < 0 {
			b.WriteString(markup.EscapeHTML(text[i : i+1]))
			continue
		}
		next, err := legacyEntity(text, i, &b)
		if err != nil {
			return "", err
		}
		i = next
	}
	return b.String(), nil
}

// legacyEntity writes the entity starting at text[begin] as HTML and
// returns the index of its last byte.
func legacyEntity(text string, begin int, b *strings.Builder) (int, error) {
	unclosed := fmt.Errorf("can't parse entities: Can't find end of the entity starting at byte offset %d", begin)
	c := text[begin]
	switch {
	case strings.HasPrefix(text[begin:], "```"):
		start := begin + 3
		lang := ""
		if end := strings.IndexAny(text[start:], " \t\r\n`"); end > 0 && text[start+end] != '`' {
			lang, start = text[start:start+end], start+end
		}
		if start < len(text) && (text[start] == '\n' || text[start] == '\r') {
			start++
		}
		end := strings.Index(text[start:], "```")
		if end < 0 {
			return 0, unclosed
		}
		body := markup.EscapeHTML(text[start : start+end])
		if lang != "" {
			body = `<code class="language-` + markup.EscapeHTML(lang) + `">` + body + "</code>"
		}
		b.WriteString("<pre>" + body + "</pre>")
		return start + end + 2, nil
	case c == '[':
		return legacyLink(text, begin, b, unclosed)
	}
	end := strings.IndexByte(text[begin+1:], c)
	if end < 0 {
		return 0, unclosed
	}
	tag := map[byte]string{'*': "b", '_': "i", '`': "code"}[c]
	if body := text[begin+1 : begin+1+end]; body != "" {
		b.WriteString("<" + tag + ">" + markup.EscapeHTML(body) + "</" + tag + ">")
	}
	return begin + 1 + end, nil
}

// legacyLink writes [text](URL) as a link, or [text] as its text.
func legacyLink(text string, begin int, b *strings.Builder, unclosed error) (int, error) {
	end := strings.IndexByte(text[begin+1:], ']')
	if end < 0 {
		return 0, unclosed
	}
	label := markup.EscapeHTML(text[begin+1 : begin+1+end])
	last := begin + 1 + end
	if last+1 < len(text) && text[last+1] == '(' {
		if close := strings.IndexByte(text[last+2:], ')'); close >= 0 {
			href := text[last+2 : last+2+close]
			b.WriteString(`<a href="` + markup.EscapeHTML(href) + `">` + label + "</a>")
			return last + 2 + close, nil
		}
	}
	b.WriteString(label)
	return last, nil
}
