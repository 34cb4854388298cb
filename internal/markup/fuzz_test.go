package markup

import (
	"errors"
	"hash/fnv"
	"math/rand"
	"testing"
	"unicode/utf8"
)

// fuzzModes maps a fuzzer byte to a mode.
var fuzzModes = []Mode{None, HTML, MarkdownV2}

func FuzzValidate(f *testing.F) {
	f.Add("<b>bold <i>x</i></b> &amp; &#128512;", uint8(1))
	f.Add(docsExample, uint8(2))
	f.Add(htmlExample, uint8(1))
	f.Add("a < b", uint8(1))
	f.Add("___italic underline_\r__", uint8(2))
	f.Fuzz(func(t *testing.T, text string, m uint8) {
		mode := fuzzModes[int(m)%len(fuzzModes)]
		err := Validate(text, mode)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("Validate error %T is not *ParseError", err)
		}
		plain, perr := Plain(text, mode)
		n, nerr := VisibleLen(text, mode)
		if (err == nil) != (perr == nil) || (err == nil) != (nerr == nil) {
			t.Fatalf("Validate, Plain and VisibleLen disagree: %v / %v / %v", err, perr, nerr)
		}
		// Invalid UTF-8 bytes count one unit each, but removed markup can
		// join them into a valid sequence, so only valid text is compared.
		if err == nil && utf8.ValidString(text) && n != UTF16Len(plain) {
			t.Fatalf("VisibleLen = %d, UTF16Len(Plain) = %d", n, UTF16Len(plain))
		}
		if pe != nil && (pe.Offset < 0 || pe.Offset > len(text)) {
			t.Fatalf("error offset %d outside the text (length %d)", pe.Offset, len(text))
		}
		if got, err := Plain(Escape(text, mode), mode); err != nil || got != text {
			t.Fatalf("Plain(Escape(text)) = %q, %v", got, err)
		}
	})
}

func FuzzSplit(f *testing.F) {
	f.Add("<b>aaa <i>bbb ccc</i></b>", uint8(1), uint16(8))
	f.Add("*aa _bb cc_*\n>quote\n>more||\nend", uint8(2), uint16(4))
	f.Add("plain text with 😀 emoji", uint8(0), uint16(3))
	f.Fuzz(func(t *testing.T, text string, m uint8, limit uint16) {
		mode := fuzzModes[int(m)%len(fuzzModes)]
		if msg := checkSplit(text, mode, int(limit)); msg != "" {
			t.Fatalf("Split(%q, %s, %d): %s", text, mode, limit, msg)
		}
		// Random bytes rarely form valid markup, so the input also seeds
		// the generator of valid documents.
		h := fnv.New64a()
		h.Write([]byte(text))
		doc := genDoc(rand.New(rand.NewSource(int64(h.Sum64()))), mode)
		if Validate(doc, mode) != nil {
			return
		}
		if msg := checkSplit(doc, mode, int(limit)); msg != "" {
			t.Fatalf("Split(%q, %s, %d): %s", doc, mode, limit, msg)
		}
	})
}
