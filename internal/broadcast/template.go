package broadcast

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/markup"
)

// A broadcast's text is a template with the smallest syntax that does the
// job: {{name}} (spaces inside the braces allowed) stands for the chat's
// value of name, escaped for the parse mode, so that a value can never
// open or close markup. A name is a letter or _ followed by letters,
// digits or _; any other "{{" is text. There is nothing else: no
// conditions, loops or functions, so a template cannot fail to run or run
// long, and what it renders is checked like any message's text.
//
// Parsing is one pass: after a "{{" the parser reads white space, a name,
// white space and "}}", and stops at the first byte that does not fit, so
// no byte is read more than twice (once looking for "{{", once inside a
// placeholder), and text segments are slices of the template, never
// copies. Its length is checked before it is parsed (Service.Create).

// segment is one piece of a template: literal text, or a placeholder.
type segment struct {
	text string
	key  string // a placeholder's name; "" for text
}

// template is a parsed text.
type template []segment

// parseTemplate splits s into text and placeholders.
func parseTemplate(s string) template {
	t, _ := parse(s)
	return t
}

// parse is parseTemplate, also returning how many bytes it examined (the
// tests hold it to a small multiple of len(s)).
func parse(s string) (template, int) {
	var t template
	steps, lit := 0, 0 // lit: start of the text not yet in t
	for from := 0; ; {
		i := strings.Index(s[from:], "{{")
		if i < 0 {
			steps += len(s) - from
			break
		}
		at := from + i
		steps += i + 2
		key, end, n := placeholder(s, at+2)
		steps += n
		if key == "" {
			from = at + 2 // "{{" that opens no placeholder is text
			continue
		}
		if at > lit {
			t = append(t, segment{text: s[lit:at]})
		}
		t = append(t, segment{key: key})
		from, lit = end, end
	}
	if lit < len(s) {
		t = append(t, segment{text: s[lit:]})
	}
	return t, steps
}

// placeholder reads, from s[i:], white space, a name, white space and
// "}}". It returns the name and the index after "}}", or "" when s[i:]
// does not hold that; n is how many bytes it examined.
func placeholder(s string, i int) (key string, end, n int) {
	start := i
	i = skipSpace(s, i)
	k := i
	for i < len(s) && keyByte(s[i], i == k) {
		i++
	}
	key = s[k:i]
	i = skipSpace(s, i)
	n = i - start
	if key == "" || !strings.HasPrefix(s[i:], "}}") {
		return "", 0, n + 1
	}
	return key, i + 2, n + 2
}

// skipSpace returns the index of the first rune at or after i that is not
// white space (as strings.TrimSpace counts it).
func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// keyByte reports whether c may be a name's byte: a letter, _ or (not
// first) a digit.
func keyByte(c byte, first bool) bool {
	letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
	return letter || !first && c >= '0' && c <= '9'
}

// plain reports whether the template has no placeholder: every chat gets
// the same text.
func (t template) plain() bool {
	for _, s := range t {
		if s.key != "" {
			return false
		}
	}
	return true
}

// render fills the placeholders from values, then defaults, each escaped
// for mode. missing is the first name found in neither ("" when none).
func (t template) render(values, defaults map[string]string, mode markup.Mode) (text, missing string) {
	var b strings.Builder
	for _, s := range t {
		if s.key == "" {
			b.WriteString(s.text)
			continue
		}
		v, ok := values[s.key]
		if !ok {
			v, ok = defaults[s.key]
		}
		if !ok {
			return "", s.key
		}
		b.WriteString(markup.Escape(v, mode))
	}
	return b.String(), ""
}
