package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/herald-dev/herald/internal/jobs"
)

// Bound limits how many entries a top-level array (or members an object)
// of a body may hold; Hint ends the error's message (what to do).
type Bound struct {
	Max  int
	Hint string
}

// checkBounds refuses a body whose top-level member named in bounds (by
// the JSON key, matched as encoding/json matches it: ignoring case) holds
// more entries than its Max. It reads the raw bytes once, allocating
// nothing per entry, and stops at the first entry over a limit, so a list
// of millions is refused for the cost of scanning to its limit, before a
// byte of it is decoded. Malformed JSON passes: the decoder reports it.
func checkBounds(body []byte, bounds map[string]Bound) *Error {
	if len(bounds) == 0 {
		return nil
	}
	var (
		depth    int
		inString bool
		escaped  bool
		keyStart int
		expect   = true // at depth 1: the next string is a key
		key      string
		counting *Bound
		name     string
		entries  int
	)
	for i, c := range body {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 1 && expect {
					key = unquoteKey(body[keyStart : i+1])
				}
			}
			continue
		}
		if depth == 2 && counting != nil && entries == 0 && !isSpace(c) && c != ']' && c != '}' {
			entries = 1
		}
		switch c {
		case '"':
			inString, keyStart = true, i
		case ':':
			if depth == 1 {
				expect = false
			}
		case ',':
			switch {
			case depth == 1:
				expect = true
			case depth == 2 && counting != nil:
				if entries++; entries > counting.Max {
					return Invalid("too many entries", jobs.FieldError{Field: name,
						Message: fmt.Sprintf("has more than %d entries; the limit is %d%s", counting.Max, counting.Max, counting.Hint)})
				}
			}
		case '{', '[':
			depth++
			if depth == 2 && !expect {
				counting, name, entries = lookupBound(bounds, key)
			}
		case '}', ']':
			if depth--; depth == 1 {
				counting = nil
			}
		}
	}
	return nil
}

// lookupBound finds key's bound, ignoring case as encoding/json does.
func lookupBound(bounds map[string]Bound, key string) (*Bound, string, int) {
	if b, ok := bounds[key]; ok {
		return &b, key, 0
	}
	folded := foldKey(key)
	for name, b := range bounds {
		if foldKey(name) == folded {
			return &b, key, 0
		}
	}
	return nil, "", 0
}

// unquoteKey decodes a JSON string's raw bytes (quotes included).
func unquoteKey(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
