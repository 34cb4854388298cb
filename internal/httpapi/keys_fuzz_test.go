package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCheckKeys drives CheckKeys' own JSON reader with any bytes: it never
// panics or loops, malformed JSON is left to the decoder (nil), and a key
// CheckKeys refuses is one that names, in some letter case, a field the
// body also names in another spelling, or a key listed twice: the merges
// encoding/json would make without a word.
func FuzzCheckKeys(f *testing.F) {
	for _, seed := range []string{
		`{"chat":"1","text":"x"}`,
		`{"chat":"1","CHAT":"2"}`,
		`{"inner":{"a":1,"A":2},"list":[{"b":1},{"b":2,"B":3}]}`,
		"{\"li\u017ft\":[],\"list\":[]}",
		`{"labels":{"k":"v","K":"w"},"raw":[{"x":1,"x":2}],"any":{"y":[1,{"z":null}]}}`,
		`{"\u0063hat":"1","chat":"2"}`,
		`{"when":"2026-12-05T00:00:00Z","Skipped":"s"}`,
		`{"chat":"1",`, `[`, `"`, `{"a":"\ud800"}`, "{\"\xff\":1}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fe := CheckKeys(body, &keysTarget{})
		if !json.Valid(body) {
			if fe != nil {
				t.Fatalf("malformed JSON refused as %q (%s); the decoder reports it", fe.Field, fe.Message)
			}
			return
		}
		if fe == nil {
			return
		}
		if fe.Field == "" || fe.Message == "" {
			t.Fatalf("refusal without a field or a message: %+v", fe)
		}
		// The refused key's last step appears in the body, in some spelling.
		key := fe.Field
		if i := strings.LastIndexAny(key, ".["); i >= 0 && !strings.HasSuffix(key, "]") {
			key = key[i+1:]
		}
		if !strings.HasSuffix(fe.Field, "]") && !strings.Contains(strings.ToLower(string(body)), strings.ToLower(key)) && !strings.Contains(string(body), `\`) {
			t.Fatalf("refused %q, which the body %q does not name", fe.Field, body)
		}
	})
}
