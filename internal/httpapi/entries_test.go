package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// notTwo refuses the entry "two" and the literal 0, and says what it saw.
func notTwo(seen *[]string) EntryCheck {
	return func(text string, quoted bool) error {
		if quoted {
			*seen = append(*seen, `"`+text+`"`)
		} else {
			*seen = append(*seen, text)
		}
		if text == "two" || !quoted && text == "0" {
			return errors.New("is not a chat")
		}
		return nil
	}
}

// TestEntryCheckJudgesEachEntryAsSent: each scalar entry of a bounded
// list is judged once, as the decoder reads it (escapes undone, invalid
// UTF-8 replaced), and the first refused one is named by its index; one
// longer than MaxEntryBytes as sent is refused without a look, and without
// MaxEntryBytes one longer than defaultEntryBytes is left to the decoder,
// as are nested values, strings the decoder refuses, and other members.
func TestEntryCheckJudgesEachEntryAsSent(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", defaultEntryBytes+1)
	for _, c := range []struct {
		in       string
		field    string // "" when accepted
		seen     string // the entries the check saw, joined by " "
		maxEntry int
	}{
		{`{"chats":["1","two","3"]}`, "chats[1]", `"1" "two"`, 0},
		{`{"chats":[ 1 , 0 ,3]}`, "chats[1]", `1 0`, 0},
		{`{"Chats":[1,2,0]}`, "Chats[2]", `1 2 0`, 0},
		{`{"chats":[true,null,-1.5e3]}`, "", `true null -1.5e3`, 0},
		{`{"chats":["` + long + `","\xff","tw\u006f"]}`, "chats[2]", `"two"`, 0},
		{`{"chats":["` + "\xff" + `"]}`, "", "\"\ufffd\"", 0},
		{`{"chats":["` + long + `"]}`, "chats[0]", ``, defaultEntryBytes},
		{`{"chats":[1,"\u0031\u0032","123"]}`, "chats[1]", `1`, 5},
		{`{"chats":[1,"12345"]}`, "", `1 "12345"`, 5},
		{`{"chats":[1,123456]}`, "chats[1]", `1`, 5},
		{`{"chats":["a\u00"]}`, "", ``, 0},
		{`{"chats":[["two"],{"a":"two"},"x"]}`, "", `"x"`, 0},
		{`{"values":{"two":"two"},"text":"two","other":["two"]}`, "", ``, 0},
		{`{"chats":["a\"b","two"]}`, "chats[1]", `"a"b" "two"`, 0},
		{`{"chats":[]}`, "", ``, 0},
		{`{"chats":[1,2,3,4],"x":0}`, "chats", `1 2 3`, 0}, // over Max first
	} {
		var seen []string
		bounds := map[string]Bound{"chats": {Max: 3, Entry: notTwo(&seen), MaxEntryBytes: c.maxEntry}}
		err := checkBounds([]byte(c.in), bounds)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: refused: %v", c.in, err)
		case c.field != "" && (err == nil || len(err.Fields) != 1 || err.Fields[0].Field != c.field):
			t.Errorf("%s: %+v, want a refusal naming %s", c.in, err, c.field)
		}
		if got := strings.Join(seen, " "); got != c.seen {
			t.Errorf("%s: the check saw %s, want %s", c.in, got, c.seen)
		}
		// Read a byte at a time, as a body may arrive, it says the same.
		var again []string
		s := newBoundsScanner(map[string]Bound{"chats": {Max: 3, Entry: notTwo(&again), MaxEntryBytes: c.maxEntry}})
		var split *Error
		for i := 0; i < len(c.in) && split == nil; i++ {
			split = s.scan([]byte{c.in[i]})
		}
		if (split == nil) != (err == nil) || strings.Join(again, " ") != c.seen {
			t.Errorf("%s: %v and %q at once, %v and %q a byte at a time", c.in, err, seen, split, again)
		}
	}
}

// failingAfter serves prefix, then fails: a body whose rest must never be
// needed.
type failingAfter struct{ prefix io.Reader }

func (f *failingAfter) Read(p []byte) (int, error) {
	n, err := f.prefix.Read(p)
	if err == io.EOF {
		return n, errors.New("read past the refused entry")
	}
	return n, err
}

// TestBadEntryRefusedBeforeTheRest: a list whose first entry is bad is
// refused from its first bytes; the rest of the body is never needed
// for the answer, and nothing is decoded.
func TestBadEntryRefusedBeforeTheRest(t *testing.T) {
	t.Parallel()
	var seen []string
	body := &failingAfter{prefix: strings.NewReader(`{"text":"hi","chats":["two",`)}
	r := httptest.NewRequest(http.MethodPost, "/", body)
	r.ContentLength = 22 << 20
	var v chatsBody
	err := DecodeJSONBounded(httptest.NewRecorder(), r, 32<<20, map[string]Bound{"chats": {Max: 100_000, Entry: notTwo(&seen)}}, &v)
	var he *Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || len(he.Fields) != 1 || he.Fields[0].Field != "chats[0]" {
		t.Fatalf("err = %v, want a 400 naming chats[0]", err)
	}
	if he.Fields[0].Message != "is not a chat" || v.Chats != nil {
		t.Fatalf("message %q, chats %v", he.Fields[0].Message, v.Chats)
	}
}
