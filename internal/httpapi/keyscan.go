package httpapi

import (
	"encoding/json"
	"unicode/utf8"
)

// keyWalker reads the JSON that CheckKeys walks, a byte at a time, with no
// allocation but for a key that holds an escape. It expects valid JSON
// (CheckKeys asks json.Valid first); on anything else it still moves
// forward at every step and stops at the end, so the walk ends.
type keyWalker struct {
	s    string
	i    int        // the next byte
	path []pathStep // to the value being read
}

// peek skips white space and returns the next byte, 0 at the end.
func (w *keyWalker) peek() byte {
	for ; w.i < len(w.s); w.i++ {
		switch c := w.s[w.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// skipString moves past the string whose opening quote is the next byte
// and returns its text as sent, quotes included, and whether it holds an
// escape.
func (w *keyWalker) skipString() (raw string, escaped bool) {
	start := w.i
	for w.i++; w.i < len(w.s); w.i++ {
		switch w.s[w.i] {
		case '\\':
			escaped = true
			w.i++
		case '"':
			w.i++
			return w.s[start:w.i], escaped
		}
	}
	return w.s[start:], escaped
}

// str reads a string as encoding/json decodes it: escapes undone, and
// invalid UTF-8 made U+FFFD.
func (w *keyWalker) str() string {
	raw, escaped := w.skipString()
	if !escaped && len(raw) >= 2 && utf8.ValidString(raw) {
		return raw[1 : len(raw)-1]
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}

// skipScalar moves past a number, true, false or null: at least one byte,
// then up to the next delimiter.
func (w *keyWalker) skipScalar() {
	for w.i++; w.i < len(w.s); w.i++ {
		switch w.s[w.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return
		}
	}
}

// skipValue moves past the object or array that starts at the next byte.
func (w *keyWalker) skipValue() {
	for depth := 0; w.i < len(w.s); {
		switch w.s[w.i] {
		case '"':
			w.skipString()
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		w.i++
		if depth <= 0 {
			return
		}
	}
}
