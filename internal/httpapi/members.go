package httpapi

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/herald-dev/herald/internal/jobs"
)

// Bound limits a top-level member of a body: how many entries its array
// (or members its object) may hold, or how many bytes its string may take
// as sent (escapes included); Hint ends the error's message (what to do).
// Entry, when set, judges each entry of the member's array as it arrives
// (entryJudge), so that a list whose first entries are bad is refused
// before the rest is read or any of it decoded; MaxEntryBytes, when set,
// refuses an entry longer than that as sent (escapes included). MaxUnits
// bounds a string in UTF-16 code units, counted as it arrives (utf16Units).
type Bound struct {
	Max           int
	MaxBytes      int
	MaxUnits      int
	Hint          string
	Entry         EntryCheck
	MaxEntryBytes int
}

// checkBounds refuses a body whose top-level member named in bounds is
// over its bound (boundsScanner).
func checkBounds(body []byte, bounds map[string]Bound) *Error {
	return newBoundsScanner(bounds).scan(body)
}

// boundsScanner reads a JSON body as it arrives and refuses it at the
// first entry or byte over a bound of its top-level members (matched by
// key as encoding/json matches them: ignoring case). It allocates nothing
// per entry and keeps no more than a key, so a list of millions is
// refused once its limit is passed, before the rest is read or a byte of
// it decoded. Malformed JSON passes: the decoder reports it.
type boundsScanner struct {
	bounds   map[string]Bound
	depth    int
	inString bool
	escaped  bool
	expect   bool   // at depth 1: the next string is a key
	key      []byte // the last key at depth 1, as sent (quotes included)
	keyOver  bool   // that key was too long to be a bounded one
	counting *Bound // the bound of the member being read
	name     string
	entries  int // entries (or string bytes) of that member so far
	units    utf16Units
	entry    entryJudge
	err      *Error
}

// maxKeyBytes is the longest key kept: no bounded key is longer.
const maxKeyBytes = 64

func newBoundsScanner(bounds map[string]Bound) *boundsScanner {
	return &boundsScanner{bounds: bounds, expect: true}
}

// scan reads the next bytes of the body.
func (s *boundsScanner) scan(p []byte) *Error {
	if s.err != nil || len(s.bounds) == 0 {
		return s.err
	}
	for _, c := range p {
		if s.inString {
			s.stringByte(c)
		} else {
			s.structural(c)
		}
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

// stringByte reads a byte inside a string.
func (s *boundsScanner) stringByte(c byte) {
	keying := s.depth == 1 && s.expect
	if keying && len(s.key) < maxKeyBytes {
		s.key = append(s.key, c)
	} else if keying {
		s.keyOver = true
	}
	closing := !s.escaped && c == '"'
	if s.depth == 2 && s.entry.open && s.counting != nil && s.counting.Entry != nil {
		s.entryByte(c, closing)
	}
	if s.depth == 1 && !s.expect && s.counting != nil && !closing {
		if s.entries++; s.counting.MaxBytes > 0 && s.entries > s.counting.MaxBytes {
			s.refuse("is longer than %d bytes as sent; the limit is %d", s.counting.MaxBytes, s.counting.MaxBytes)
		}
		if limit := s.counting.MaxUnits; limit > 0 && s.units.add(c, s.escaped) > limit {
			s.refuse("is longer than %d UTF-16 code units; the limit is %d", limit, limit)
		}
	}
	switch {
	case s.escaped:
		s.escaped = false
	case c == '\\':
		s.escaped = true
	case c == '"':
		s.inString = false
		if s.depth == 1 && !s.expect {
			s.counting = nil // a bounded string ended
		}
	}
}

// structural reads a byte outside strings.
func (s *boundsScanner) structural(c byte) {
	if s.depth == 2 && s.counting != nil && s.entries == 0 && !isSpace(c) && c != ']' && c != '}' {
		s.entries = 1
	}
	if s.depth == 2 && s.counting != nil && s.counting.Entry != nil {
		if s.entryStructural(c); s.err != nil {
			return
		}
	}
	switch c {
	case '"':
		s.inString = true
		switch {
		case s.depth == 1 && s.expect:
			s.key, s.keyOver = append(s.key[:0], c), false
		case s.depth == 1:
			s.begin(true)
		}
	case ':':
		if s.depth == 1 {
			s.expect = false
		}
	case ',':
		switch {
		case s.depth == 1:
			s.expect = true
		case s.depth == 2 && s.counting != nil:
			if s.entries++; s.counting.Max > 0 && s.entries > s.counting.Max {
				s.refuse("has more than %d entries; the limit is %d", s.counting.Max, s.counting.Max)
			}
		}
	case '{', '[':
		if s.depth++; s.depth == 2 && !s.expect {
			s.begin(false)
		}
	case '}', ']':
		if s.depth--; s.depth == 1 {
			s.counting = nil
		}
	}
}

// begin starts reading the value of the last key: a string, or a list.
func (s *boundsScanner) begin(str bool) {
	s.counting, s.entries, s.entry.open, s.units = nil, 0, false, utf16Units{}
	if s.keyOver {
		return
	}
	key := unquoteKey(s.key)
	b, ok := s.bounds[key]
	if !ok {
		folded := foldKey(key)
		for name, nb := range s.bounds {
			if foldKey(name) == folded {
				b, ok = nb, true
				break
			}
		}
	}
	if ok && (str && (b.MaxBytes > 0 || b.MaxUnits > 0) || !str && b.Max > 0) {
		s.counting, s.name = &b, key
	}
}

func (s *boundsScanner) refuse(format string, args ...any) {
	s.err = Invalid("too large", jobs.FieldError{Field: s.name, Message: fmt.Sprintf(format, args...) + s.counting.Hint})
}

// unquoteKey decodes a JSON string's raw bytes (quotes included).
func unquoteKey(raw []byte) string {
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return ""
	}
	return k
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// scanningReader passes a body through a boundsScanner as it is read; a
// read over a bound fails with the scanner's *Error.
type scanningReader struct {
	r io.Reader
	s *boundsScanner
}

func (r scanningReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if e := r.s.scan(p[:n]); e != nil {
		return n, e
	}
	return n, err
}
