package broadcast

import (
	"strings"

	"github.com/herald-dev/herald/internal/markup"
)

// A broadcast's text is a template with the smallest syntax that does the
// job: {{name}} (spaces inside the braces allowed) stands for the chat's
// value of name, escaped for the parse mode, so that a value can never
// open or close markup. A name is a letter or _ followed by letters,
// digits or _; any other "{{" is text. There is nothing else: no
// conditions, loops or functions, so a template cannot fail to run or run
// long, and what it renders is checked like any message's text.

// segment is one piece of a template: literal text, or a placeholder.
type segment struct {
	text string
	key  string // a placeholder's name; "" for text
}

// template is a parsed text.
type template []segment

// parseTemplate splits s into text and placeholders.
func parseTemplate(s string) template {
	var t template
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			break
		}
		key := strings.TrimSpace(s[i+2 : i+2+j])
		if !validKey(key) {
			t = t.add(segment{text: s[:i+2]})
			s = s[i+2:]
			continue
		}
		t = t.add(segment{text: s[:i]})
		t = append(t, segment{key: key})
		s = s[i+2+j+2:]
	}
	return t.add(segment{text: s})
}

// add appends a text segment, merged with a text segment before it.
func (t template) add(s segment) template {
	if s.text == "" {
		return t
	}
	if n := len(t); n > 0 && t[n-1].key == "" {
		t[n-1].text += s.text
		return t
	}
	return append(t, s)
}

// validKey reports whether k is a placeholder's name.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
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
