package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type keysInner struct {
	Name string `json:"name"`
}

type keysEmbedded struct {
	Extra string `json:"extra"`
}

type keysTarget struct {
	keysEmbedded
	Chat    string            `json:"chat"`
	Text    string            `json:"text,omitempty"`
	Labels  map[string]string `json:"labels"`
	Inner   keysInner         `json:"inner"`
	List    []keysInner       `json:"list"`
	Raw     []json.RawMessage `json:"raw"`
	Any     any               `json:"any"`
	When    time.Time         `json:"when"`
	Skipped string            `json:"-"`
	NoTag   string
}

// TestCheckKeys: what encoding/json would merge is refused with the key's
// path; what it keeps apart is accepted.
func TestCheckKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, field, msg string // field "" means accepted
	}{
		{"plain", `{"chat":"1","text":"x","extra":"e","NoTag":"n"}`, "", ""},
		{"same key in two objects", `{"inner":{"name":"a"},"list":[{"name":"b"},{"name":"c"}]}`, "", ""},
		{"labels differing in case", `{"labels":{"env":"a","ENV":"b","Env":"c"}}`, "", ""},
		{"any differing in case", `{"any":{"a":1,"A":2}}`, "", ""},
		{"unknown key left to the decoder", `{"nope":1}`, "", ""},
		{"malformed left to the decoder", `{"chat":"1",`, "", ""},
		{"duplicate", `{"chat":"1","chat":"2"}`, "chat", "more than once"},
		{"case-variant duplicate", `{"chat":"1","CHAT":"2"}`, "CHAT", `repeats the key "chat"`},
		{"case-variant alone", `{"Chat":"1"}`, "Chat", `did you mean "chat"`},
		{"embedded field variant", `{"EXTRA":"1"}`, "EXTRA", `did you mean "extra"`},
		{"untagged field variant", `{"notag":"1"}`, "notag", `did you mean "NoTag"`},
		{"Kelvin sign", "{\"\u212aey\":1,\"key\":2}", "key", "other letter case"},
		{"long s", "{\"label\u017f\":{}}", "label\u017f", `did you mean "labels"`},
		{"nested struct", `{"inner":{"name":"a","NAME":"b"}}`, "inner.NAME", `repeats the key "name"`},
		{"struct in a list", `{"list":[{"name":"a"},{"Name":"b"}]}`, "list[1].Name", `did you mean "name"`},
		{"raw element", `{"raw":[{"title":"a","Title":"b"}]}`, "raw[0].Title", `repeats the key "title"`},
		{"labels duplicate", `{"labels":{"env":"a","env":"b"}}`, "labels.env", "more than once"},
		{"odd key named quoted", `{"labels":{"a b":"1","a b":"2"}}`, `labels["a b"]`, "more than once"},
		{"time object skipped", `{"when":"2026-01-02T15:04:05Z","chat":"1"}`, "", ""},
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

// TestCheckKeysAgreesWithEncodingJSON: for every body CheckKeys accepts,
// decoding it case-sensitively key by key gives what encoding/json gives;
// the pairs it refuses are ones encoding/json merges.
func TestCheckKeysAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"chat":"1","CHAT":"2"}`,
		`{"Chat":"1"}`,
		"{\"li\u017ft\":[]}",
		"{\"ch\u0041t\":\"x\"}",
	} {
		var v keysTarget
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if v.Chat == "" && v.Text == "" && v.List == nil {
			t.Fatalf("%s: encoding/json did not merge the key into a field; the case is not a merge", body)
		}
		if CheckKeys([]byte(body), &v) == nil {
			t.Errorf("%s: merged by encoding/json but accepted", body)
		}
	}
}
