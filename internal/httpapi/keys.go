package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/jobs"
)

// CheckKeys refuses JSON keys that encoding/json would silently merge: a key
// given twice in one object (the last one wins), two keys that differ only
// in letter case (encoding/json matches struct fields case-insensitively,
// so {"chat":"42","CHAT":"43"} would send to 43), and a key that is a
// case variant of a field of the target type ({"Chat":…} for "chat"). It
// walks data along the Go type of v, so the keys of a map (labels, which
// are data and case-sensitive) may differ in case but not repeat.
//
// It returns nil or a FieldError naming the key by its path
// ("alerts[2].title"). Malformed JSON gives nil: the decoder reports it.
//
// The walk reads data itself (keyWalker) rather than by json.Decoder's
// tokens, which allocate for every string and number; what it needs of
// each Go type is worked out once (keyTableOf).
func CheckKeys(data []byte, v any) *jobs.FieldError {
	if !json.Valid(data) {
		return nil
	}
	return checkDecodedKeys(data, v)
}

// checkDecodedKeys is CheckKeys for data known to be one valid JSON value,
// such as a body that json.Decoder has just decoded whole: it skips
// json.Valid, which would read the body once more.
func checkDecodedKeys(data []byte, v any) *jobs.FieldError {
	w := keyWalker{s: string(data)}
	return w.value(reflect.TypeOf(v))
}

// value reads one JSON value; t is the Go type it will be decoded into
// (nil when unknown).
func (w *keyWalker) value(t reflect.Type) *jobs.FieldError {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch w.peek() {
	case '{':
		return w.object(t)
	case '[':
		return w.array(t)
	case '"':
		w.skipString()
	default:
		w.skipScalar()
	}
	return nil
}

// array reads a JSON array, its next byte being the '['.
func (w *keyWalker) array(t reflect.Type) *jobs.FieldError {
	var elem reflect.Type
	if t != nil {
		elem = keyTableOf(t).arrayElem
	}
	w.i++
	for i := 0; ; i++ {
		c := w.peek()
		if c == ',' {
			w.i++
			c = w.peek()
		}
		if c == ']' || c == '}' || c == 0 {
			w.i++
			return nil
		}
		w.path = append(w.path, pathStep{index: i})
		if fe := w.value(elem); fe != nil {
			return fe
		}
		w.path = w.path[:len(w.path)-1]
	}
}

// unknownKeys is the table of an object of unknown type, or of a
// RawMessage decoded later into a struct (an element of an alerts batch):
// merged keys are refused all the same.
var unknownKeys keyTable

// object reads a JSON object, its next byte being the '{'.
func (w *keyWalker) object(t reflect.Type) *jobs.FieldError {
	kt := &unknownKeys
	if t != nil {
		kt = keyTableOf(t)
	}
	if kt.object == ownKeys {
		w.skipValue()
		return nil
	}
	w.i++
	var seen keySet // folded (struct) or exact (map) key → key as sent
	for {
		c := w.peek()
		if c == ',' {
			w.i++
			c = w.peek()
		}
		if c != '"' {
			w.i++ // the '}'
			return nil
		}
		key := w.str()
		if w.peek() != ':' {
			return nil
		}
		w.i++
		w.path = append(w.path, pathStep{key: key, named: true})
		f, exact := kt.fields[key]
		id := key
		switch {
		case kt.object == mapKeys:
		case exact:
			id = f.fold
		default:
			id = foldKey(key)
		}
		if prev, dup := seen.lookup(id); dup {
			if prev == key {
				return w.refuse("is given more than once in one object; send each key once")
			}
			return w.refuse(fmt.Sprintf("repeats the key %q in other letter case; keys are case-sensitive: send it once, spelled as documented", prev))
		}
		seen.add(id, key)
		vt := kt.mapElem
		if kt.fields != nil {
			if !exact {
				if name, ok := kt.folded[id]; ok {
					return w.refuse(fmt.Sprintf("is not a known field; keys are case-sensitive: did you mean %q?", name))
				}
			}
			vt = f.t // nil for an unknown key: the decoder refuses it
		}
		if fe := w.value(vt); fe != nil {
			return fe
		}
		w.path = w.path[:len(w.path)-1]
	}
}

// keySet holds the keys seen in one object, by their id: in place for the
// few keys of most objects, in a map past those.
type keySet struct {
	n     int
	few   [8]struct{ id, key string }
	spill map[string]string
}

// lookup returns the key seen with id, if any.
func (s *keySet) lookup(id string) (string, bool) {
	for _, e := range s.few[:min(s.n, len(s.few))] {
		if e.id == id {
			return e.key, true
		}
	}
	key, ok := s.spill[id]
	return key, ok
}

func (s *keySet) add(id, key string) {
	if s.n < len(s.few) {
		s.few[s.n].id, s.few[s.n].key = id, key
	} else {
		if s.spill == nil {
			s.spill = make(map[string]string)
		}
		s.spill[id] = key
	}
	s.n++
}

// pathStep is one step of the path to a value: a key, or an index in an
// array.
type pathStep struct {
	key   string
	index int
	named bool // key, not index
}

// refuse is the FieldError naming the key the walk is at, its path
// spelled as "alerts[2].title" (and copied, so as not to keep the
// request's body alive).
func (w *keyWalker) refuse(msg string) *jobs.FieldError {
	path := ""
	for _, p := range w.path {
		if p.named {
			path = joinPath(path, p.key)
		} else {
			path += "[" + strconv.Itoa(p.index) + "]"
		}
	}
	return &jobs.FieldError{Field: strings.Clone(path), Message: msg}
}

// foldKey maps every rune of s to the smallest rune of its Unicode simple
// case-folding orbit, so two keys encoding/json would match to one field
// (it folds "K" to the Kelvin sign and "s" to "ſ" too) fold to one string.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == utf8.RuneError {
			b.WriteRune(r)
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < least {
				least = f
			}
		}
		b.WriteRune(least)
	}
	return b.String()
}

// joinPath names a key under path: "labels.env", or labels["a.b"] when the
// key would not read back as one name.
func joinPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}
