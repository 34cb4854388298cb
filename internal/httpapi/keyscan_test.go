package httpapi

import (
	"strings"
	"testing"
)

// TestCheckKeysReadsKeysAsDecoded: a key is compared as encoding/json
// decodes it, escapes undone and invalid UTF-8 made U+FFFD, not as sent;
// the walk's own reading of the JSON must agree.
func TestCheckKeysReadsKeysAsDecoded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, field, msg string // field "" means accepted
	}{
		{"escaped duplicate", `{"ch\u0061t":"1","chat":"2"}`, "chat", "more than once"},
		{"escaped case variant", `{"\u0043hat":"1"}`, "Chat", `did you mean "chat"`},
		{"escaped quote in a label", `{"labels":{"a\"b":"1","a\u0022b":"2"}}`, `labels["a\"b"]`, "more than once"},
		{"invalid UTF-8 labels merge", "{\"labels\":{\"x\xffy\":\"1\",\"x\xfey\":\"2\"}}", "labels[\"x\uFFFDy\"]", "more than once"},
		{"UTF-8 labels apart", `{"labels":{"é":"1","É":"2"}}`, "", ""},
		{"white space and escapes in values", "{ \"text\" : \"a\\\\\\\"}\" ,\n\t\"inner\" : { \"name\" : \"]\" } , \"chat\" : \"1\" }", "", ""},
		{"skipped time value, then a duplicate", `{"when":"2026-01-02T15:04:05Z","list":[1,{"name":"a"},[{"x":1}]],"chat":"1","chat":"2"}`, "chat", "more than once"},
		{"index counts scalars", `{"list":[1,"x",{"name":"a","name":"b"}]}`, "list[2].name", "more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fe := CheckKeys([]byte(tc.body), &keysTarget{})
			switch {
			case tc.field == "" && fe != nil:
				t.Fatalf("refused %s: %+v", tc.body, fe)
			case tc.field == "":
			case fe == nil:
				t.Fatalf("accepted %s, want %q refused", tc.body, tc.field)
			case fe.Field != tc.field || !strings.Contains(fe.Message, tc.msg):
				t.Fatalf("got %q: %q; want %q: …%s…", fe.Field, fe.Message, tc.field, tc.msg)
			}
		})
	}
}

// TestCheckKeysWalkEndsOnMalformedJSON: the walk behind DecodeJSON, which
// skips json.Valid, ends on any input and does not panic.
func TestCheckKeysWalkEndsOnMalformedJSON(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, `{`, `[`, `"`, `{"`, `{"chat"`, `{"chat":`, `{"chat":"1"`, `{"chat" "1"}`, `{"list":[{]}`,
		`}`, `]`, `{]`, `[}`, `{"a":1,,}`, `{"when":{`, `{"when":{"a":"\`, `{"labels":{"a":1 "a":2}}`, `x`, `{x}`, `[x,]`,
	} {
		_ = checkDecodedKeys([]byte(body), &keysTarget{})
		_ = checkDecodedKeys([]byte(body), nil)
		if fe := CheckKeys([]byte(body), &keysTarget{}); fe != nil {
			t.Errorf("%q: malformed but refused: %+v", body, fe)
		}
	}
}
