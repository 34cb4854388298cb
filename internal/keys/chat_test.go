package keys_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/keys"
)

func TestValidUsername(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"alice": true, "Alice_42": true, "a_b_c": true, strings.Repeat("a", 32): true,
		"": false, "bob": false, "abcd": false, strings.Repeat("a", 33): false,
		"_alice": false, "1alice": false, "ali-ce": false, "ali ce": false, "alicé": false, "@alice": false,
	} {
		if got := keys.ValidUsername(name); got != want {
			t.Errorf("ValidUsername(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseChat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"42", "42", nil},
		{"+42", "42", nil},
		{"-1001234567890", "-1001234567890", nil},
		{"007", "7", nil},
		{"@Alerts_chan", "@Alerts_chan", nil},
		{"", "", keys.ErrNoChat},
		{"@", "", keys.ErrUsername},
		{"@ab", "", keys.ErrUsername},
		{"@_alerts", "", keys.ErrUsername},
		{"0", "", keys.ErrChatID},
		{"alerts", "", keys.ErrChatID},
		{" 42", "", keys.ErrChatID},
		{"99999999999999999999", "", keys.ErrChatID},
	} {
		got, err := keys.ParseChat(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("ParseChat(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
