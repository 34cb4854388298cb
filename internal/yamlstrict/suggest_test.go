package yamlstrict

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	known := []string{"name", "url", "interval", "timeout", "labels", "destinations"}
	tests := []struct {
		got, want string
	}{
		{"nmae", `did you mean "name"?`},          // swapped letters: two edits
		{"intervall", `did you mean "interval"?`}, // one extra letter
		{"destinatons", `did you mean "destinations"?`},
		{"URL", `did you mean "url"?`}, // case is ignored
		{"Labels", `did you mean "labels"?`},
		{"timeouts", `did you mean "timeout"?`},
		{"colour", "use one of name, url, interval, timeout, labels, destinations"},
		{"", "use one of name, url, interval, timeout, labels, destinations"},
		{strings.Repeat("x", 200), "use one of name, url, interval, timeout, labels, destinations"},
	}
	for _, tc := range tests {
		if got := Suggest(tc.got, known); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.got, got, tc.want)
		}
	}
	// Ties go to the key listed first.
	if got := Suggest("ab", []string{"abc", "abd"}); got != `did you mean "abc"?` {
		t.Errorf("tie: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"nmae", "name", 2},
		{"flaw", "lawn", 2},
	}
	for _, tc := range tests {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
