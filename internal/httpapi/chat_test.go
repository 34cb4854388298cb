package httpapi

import (
	"encoding/json"
	"testing"
)

// TestChatRefDecodes: a chat decodes from a string as encoding/json
// decodes a string (escapes undone, invalid UTF-8 replaced), whichever
// path it takes, from an integer as its digits, and is refused as any
// other value naming what it was.
func TestChatRefDecodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{`"42"`, "42", false},
		{`"@alerts"`, "@alerts", false},
		{`" -100123 "`, " -100123 ", false},
		{`"\u0034\u0032"`, "42", false},
		{`"a\"b"`, `a"b`, false},
		{"\"\xff42\"", "\ufffd42", false},
		{`"Zürich"`, "Zürich", false},
		{`""`, "", false},
		{`-1001234567890123`, "-1001234567890123", false},
		{`null`, "", false},
		{`1.5`, "", true},
		{`true`, "", true},
		{`{"id":1}`, "", true},
	} {
		var v struct{ Chat ChatRef }
		err := json.Unmarshal([]byte(`{"chat":`+c.in+`}`), &v)
		if c.bad != (err != nil) || string(v.Chat) != c.want {
			t.Errorf("%s: %q, %v; want %q (refused: %v)", c.in, v.Chat, err, c.want, c.bad)
		}
		var s string
		if c.in[0] == '"' && (json.Unmarshal([]byte(c.in), &s) != nil || s != string(v.Chat)) {
			t.Errorf("%s: %q as a chat, %q as a string", c.in, v.Chat, s)
		}
	}
}
