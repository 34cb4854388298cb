package httpapi

import (
	"bytes"
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
func CheckKeys(data []byte, v any) *jobs.FieldError {
	t := reflect.TypeOf(v)
	dec := json.NewDecoder(bytes.NewReader(data))
	fe, _ := walkKeys(dec, t, "")
	return fe
}

// errMalformed stops the walk at JSON the decoder will refuse anyway.
var errMalformed = fmt.Errorf("malformed JSON")

// walkKeys reads one JSON value from dec; t is the Go type it will be
// decoded into (nil when unknown).
func walkKeys(dec *json.Decoder, t reflect.Type, path string) (*jobs.FieldError, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errMalformed
	}
	return walkValue(dec, tok, t, path)
}

// walkValue reads the rest of the JSON value that starts with tok.
func walkValue(dec *json.Decoder, tok json.Token, t reflect.Type, path string) (*jobs.FieldError, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil {
			elem = keyTableOf(t).arrayElem
		}
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			if err != nil {
				return nil, errMalformed
			}
			if _, ok := tok.(json.Delim); !ok {
				continue // a scalar holds no keys: no path to build
			}
			if fe, err := walkValue(dec, tok, elem, path+"["+strconv.Itoa(i)+"]"); fe != nil || err != nil {
				return fe, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, errMalformed
		}
	}
	return nil, nil
}

func walkObject(dec *json.Decoder, t reflect.Type, path string) (*jobs.FieldError, error) {
	// Unknown (nil) or a RawMessage, decoded later into a struct (an
	// element of an alerts batch): merged keys are refused all the same.
	kt := &keyTable{}
	if t != nil {
		kt = keyTableOf(t)
	}
	if kt.object == ownKeys {
		return skipObject(dec)
	}
	kind, fields, elem := kt.object, kt.fields, kt.mapElem
	seen := map[string]string{} // folded (struct) or exact (map) key → key as sent
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errMalformed
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errMalformed
		}
		at := joinPath(path, key)
		f, exact := fields[key]
		id := key
		switch {
		case kind == mapKeys:
		case exact:
			id = f.fold
		default:
			id = foldKey(key)
		}
		if prev, dup := seen[id]; dup {
			if prev == key {
				return &jobs.FieldError{Field: at, Message: "is given more than once in one object; send each key once"}, nil
			}
			return &jobs.FieldError{Field: at, Message: fmt.Sprintf("repeats the key %q in other letter case; keys are case-sensitive: send it once, spelled as documented", prev)}, nil
		}
		seen[id] = key
		vt := elem
		if fields != nil {
			if !exact {
				if name, ok := kt.folded[id]; ok {
					return &jobs.FieldError{Field: at, Message: fmt.Sprintf("is not a known field; keys are case-sensitive: did you mean %q?", name)}, nil
				}
			}
			vt = f.t // nil for an unknown key: the decoder refuses it
		}
		if fe, err := walkKeys(dec, vt, at); fe != nil || err != nil {
			return fe, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, errMalformed
	}
	return nil, nil
}

// skipObject consumes the rest of an object decoded by a custom
// unmarshaler, whose keys are its own business.
func skipObject(dec *json.Decoder) (*jobs.FieldError, error) {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return nil, errMalformed
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil, nil
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
