package httpapi

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/jobs"
)

// EntryCheck judges one entry of a bounded list as the body arrives: a
// string entry as the decoder reads it (escapes undone, quoted set), or
// the text of a literal (a number, true, false, null). It returns nil for
// an entry it accepts or leaves to the decoder, and an error worded for
// the entry's field otherwise. Objects and arrays in the list, and
// strings the decoder would refuse, are left to the decoder.
type EntryCheck func(text string, quoted bool) error

// defaultEntryBytes is the longest entry judged when the bound sets no
// MaxEntryBytes; longer ones are left to the decoder.
const defaultEntryBytes = 1024

// entryJudge holds the entry of a bounded list being read.
type entryJudge struct {
	open    bool // an entry is being read
	quoted  bool // it is a string
	escaped bool // it holds an escape
	skip    bool // it is left to the decoder
	text    []byte
}

// entryStructural reads a byte outside strings at depth 2 of a list whose
// bound has an Entry check: it starts and ends entries.
func (s *boundsScanner) entryStructural(c byte) {
	e := &s.entry
	switch {
	case e.open && !e.quoted && (c == ',' || c == ']' || c == '}' || c == ':' || isSpace(c)):
		s.judgeEntry()
	case e.open && !e.quoted:
		s.addEntryByte(c)
	case c == '"':
		*e = entryJudge{open: true, quoted: true, text: e.text[:0]}
	case c == '{' || c == '[' || c == ',' || c == ']' || c == '}' || c == ':' || isSpace(c):
	default:
		*e = entryJudge{open: true, text: e.text[:0]}
		s.addEntryByte(c)
	}
}

// entryByte reads a byte of a string entry; closing is its ending quote.
func (s *boundsScanner) entryByte(c byte, closing bool) {
	if closing {
		s.judgeEntry()
		return
	}
	if c == '\\' {
		s.entry.escaped = true
	}
	s.addEntryByte(c)
}

// addEntryByte keeps a byte of the entry, up to the most an entry may
// take: past it, the entry is refused (MaxEntryBytes) or left to the
// decoder.
func (s *boundsScanner) addEntryByte(c byte) {
	e := &s.entry
	if e.skip {
		return
	}
	limit := s.counting.MaxEntryBytes
	if limit <= 0 {
		limit = defaultEntryBytes
	}
	if len(e.text) < limit {
		e.text = append(e.text, c)
		return
	}
	if e.skip = true; s.counting.MaxEntryBytes > 0 {
		s.refuseEntry(fmt.Sprintf("is longer than %d bytes as sent, the most an entry may take", limit))
	}
}

// judgeEntry ends the entry being read and refuses the body when the
// check refuses the entry.
func (s *boundsScanner) judgeEntry() {
	e := &s.entry
	e.open = false
	if s.counting == nil || s.counting.Entry == nil || e.skip {
		return
	}
	text := string(e.text)
	if e.quoted && (e.escaped || !utf8.ValidString(text)) {
		// As the decoder reads it; one it refuses is its to report.
		if json.Unmarshal([]byte(`"`+text+`"`), &text) != nil {
			return
		}
	}
	if err := s.counting.Entry(text, e.quoted); err != nil {
		s.refuseEntry(err.Error())
	}
}

// refuseEntry refuses the body for the entry being read, named by its
// index (the count of entries so far).
func (s *boundsScanner) refuseEntry(msg string) {
	field := fmt.Sprintf("%s[%d]", s.name, s.entries-1)
	s.err = Invalid("invalid "+s.name, jobs.FieldError{Field: field, Message: msg})
}
