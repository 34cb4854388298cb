package feeds

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain words", "plain words"},
		{"  spaced \t out \n\n\n\n lines  ", "spaced out\n\nlines"},
		{"<p>One</p><p>Two</p>", "One\n\nTwo"},
		{"a<br>b<br/>c", "a\nb\nc"},
		{"<ul><li>x</li><li>y</li></ul>", "• x\n• y"},
		{"Fish &amp; chips &lt;3 &eacute;t&eacute; &#128512;", "Fish & chips <3 été \U0001F600"},
		{"<script>alert(1)</script>safe<style>b{}</style>", "safe"},
		{"<b>bold</b> and <i>italic</i>", "bold and italic"},
		{"<img src=x alt=\"A chart\">", "A chart"},
		{"<table><tr><td>a</td><td>b</td></tr></table>", "a b"},
		{"unclosed <b>tag", "unclosed tag"},
		{"a < b and c > d", "a < b and c > d"},
		{"ctrl\x00\x07chars", "ctrl chars"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	} {
		if got := plainText(tc.in); got != tc.want {
			t.Errorf("plainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTitleText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Plain title", "Plain title"},
		{"<b>Bold</b> &amp; <em>loud</em>", "Bold & loud"},
		{"Use Vec<T> and Option<Box<U>>", "Use Vec<T> and Option<Box<U>>"},
		{"Fish & <chips>", "Fish & <chips>"},
	} {
		if got := titleText(tc.in); got != tc.want {
			t.Errorf("titleText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := titleText("a\n\nb <p>c</p>"); got != "a b c" {
		t.Errorf("titleText folds lines: got %q", got)
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one two three four five", 15, "one two three…"},
		{"abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"},
		{"ééééééééééé", 5, "éééé…"},
		{"x", 0, ""},
	} {
		got := shorten(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if utf8.RuneCountInString(got) > max(tc.max, 0) {
			t.Errorf("shorten(%q, %d) is %d characters long", tc.in, tc.max, utf8.RuneCountInString(got))
		}
	}
	long := strings.Repeat("word ", 1000)
	if got := shorten(long, maxSummaryRunes); utf8.RuneCountInString(got) > maxSummaryRunes || !strings.HasSuffix(got, "…") {
		t.Fatalf("long text shortened to %d characters", utf8.RuneCountInString(got))
	}
}
