package markup

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateRunes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one two three", 8, "one two…"},
		{"one two three", 5, "one…"},
		{"héllo wörld", 6, "héllo…"},
		{"🙂🙂🙂", 2, "🙂…"},
		{"abc", 0, ""},
		{"abc", 1, "…"},
	}
	for _, tc := range tests {
		got := TruncateRunes(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("TruncateRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if utf8.RuneCountInString(got) > max(tc.n, 0) {
			t.Errorf("TruncateRunes(%q, %d) = %q is longer than %d runes", tc.in, tc.n, got, tc.n)
		}
	}
	if RuneUTF16Len('a') != 1 || RuneUTF16Len('é') != 1 || RuneUTF16Len('🙂') != 2 {
		t.Error("RuneUTF16Len miscounts")
	}
}
