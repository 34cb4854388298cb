package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCheckBounds: a bounded top-level list or object is counted as sent
// (keys matched as encoding/json matches them), nested values and strings
// never count, and one entry over the limit is refused naming the field.
func TestCheckBounds(t *testing.T) {
	t.Parallel()
	bounds := map[string]Bound{"chats": {Max: 3, Hint: ": split"}, "values": {Max: 2}, "text": {MaxBytes: 6}, "note": {MaxUnits: 3}}
	for _, c := range []struct {
		in    string
		field string // "" when accepted
	}{
		{`{"chats":["1","2","3"]}`, ""},
		{`{"chats":[ ]}`, ""},
		{`{"chats":["1","2","3","4"]}`, "chats"},
		{`{"chats":[1,2,3,4]}`, "chats"},
		{`{"CHATS":["1","2","3","4"]}`, "CHATS"},
		{`{"ch\u0061ts":["1","2","3","4"]}`, "chats"},
		{`{"text":"chats","chats":["a,b,c,d,e"]}`, ""},
		{`{"chats":[["1","2","3","4"]], "x":{"chats":[1,2,3,4]}}`, ""},
		{`{"values":{"1":{"a":"x","b":"y","c":"z"},"2":{}}}`, ""},
		{`{"values":{"1":{},"2":{},"3":{}}}`, "values"},
		{`{"other":[1,2,3,4,5],"chats":"1,2,3,4"}`, ""},
		{`{"chats":[1,2,3,4`, "chats"}, // malformed, but over the limit already
		{`{"chats":["\"],[\"", "x\\", 3]}`, ""},
		{`{"text":"123456"}`, ""},
		{`{"text":"1234567"}`, "text"},
		{`{"text":"\"\"\"\""}`, "text"},
		{`{"TEXT":["a","b","c","d","e"],"chats":"123456789"}`, ""},
		{`{"values":{"text":"123456789"},"x":"text"}`, ""},
		{`{"note":"abc"}`, ""},
		{`{"note":"\u0041\u0042\"","NOTE":"ééé"}`, ""},
		{`{"note":"abcd"}`, "note"},
		{`{"Note":"ab€€"}`, "Note"},
	} {
		err := checkBounds([]byte(c.in), bounds)
		// Read a byte at a time, as a body may arrive, it says the same.
		s := newBoundsScanner(bounds)
		var split *Error
		for i := 0; i < len(c.in) && split == nil; i++ {
			split = s.scan([]byte{c.in[i]})
		}
		if (split == nil) != (err == nil) {
			t.Errorf("%s: %v at once, %v a byte at a time", c.in, err, split)
		}
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: refused: %v", c.in, err)
		case c.field != "" && (err == nil || len(err.Fields) != 1 || err.Fields[0].Field != c.field):
			t.Errorf("%s: %+v, want a refusal naming %s", c.in, err, c.field)
		case c.field == "chats" && !strings.Contains(err.Fields[0].Message, "the limit is 3: split"):
			t.Errorf("%s: message %q", c.in, err.Fields[0].Message)
		}
	}
}

// millionChats is a body of over a million chats, 22 MiB.
func millionChats() string {
	var b strings.Builder
	b.WriteString(`{"text":"hi","chats":[`)
	for i := 0; b.Len() < 22<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(1_000_000_000+i) + `"`)
	}
	b.WriteString(`]}`)
	return b.String()
}

type chatsBody struct {
	Text  string   `json:"text"`
	Chats []string `json:"chats"`
}

// TestLongListRefusedBeforeDecoding: a body listing more chats than the
// bound is refused without being decoded: it costs little more memory
// than the body itself (decoding it allocated 860 MiB for 22 MiB).
func TestLongListRefusedBeforeDecoding(t *testing.T) {
	body := millionChats()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	var v chatsBody
	err := DecodeJSONBounded(httptest.NewRecorder(), r, 32<<20, map[string]Bound{"chats": {Max: 100_000}}, &v)
	runtime.ReadMemStats(&after)
	var he *Error
	if !errors.As(err, &he) || he.Status != 400 || len(he.Fields) != 1 || he.Fields[0].Field != "chats" {
		t.Fatalf("err = %v, want a 400 naming chats", err)
	}
	if v.Chats != nil {
		t.Error("the list was decoded")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*uint64(len(body)) {
		t.Errorf("refusing a %d-byte body allocated %d bytes", len(body), alloc)
	}
}

// TestLargeBodiesTakeTurns: while LargeReads large bodies are being read,
// another large body waits (and gives up when its request ends), and a
// small body does not wait at all.
func TestLargeBodiesTakeTurns(t *testing.T) {
	for range LargeReads {
		largeTurns <- struct{}{}
	}
	large := `{"text":"` + strings.Repeat("x", LargeBody) + `"}`
	decode := func(ctx context.Context, body string, chunked bool) error {
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(body))
		if chunked {
			r.ContentLength = -1
		}
		var v chatsBody
		return DecodeJSON(httptest.NewRecorder(), r, 32<<20, &v)
	}
	if err := decode(context.Background(), `{"text":"small"}`, false); err != nil {
		t.Errorf("a small body: %v", err)
	}
	for _, chunked := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := decode(ctx, large, chunked)
		cancel()
		var he *Error
		if !errors.As(err, &he) || he.Status != http.StatusRequestTimeout {
			t.Errorf("chunked %v: a large body while every turn is taken: %v, want 408 once its request ended", chunked, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- decode(context.Background(), large, true) }()
	select {
	case err := <-done:
		t.Fatalf("a large body was read without a turn: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	<-largeTurns // one turn frees
	if err := <-done; err != nil {
		t.Errorf("a large body once a turn freed: %v", err)
	}
	for range LargeReads - 1 {
		<-largeTurns
	}
	if n := len(largeTurns); n != 0 {
		t.Errorf("%d turns still taken after every read ended", n)
	}
}

// BenchmarkDecodeLongListRefused refuses a 22 MiB body of a million
// chats over its bound.
func BenchmarkDecodeLongListRefused(b *testing.B) {
	body := millionChats()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		var v chatsBody
		if err := DecodeJSONBounded(httptest.NewRecorder(), r, 32<<20, map[string]Bound{"chats": {Max: 100_000}}, &v); err == nil {
			b.Fatal("accepted")
		}
	}
}
