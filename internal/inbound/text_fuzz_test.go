package inbound

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/markup"
)

// FuzzConvert checks the converters on any input: the HTML is valid as
// Telegram parses it, and text with no mark in it comes out as it went
// in (the plain text unchanged, the HTML its escaping).
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"*bold* _it_ ~st~ `code`", "**b** __u__ ~~s~~ ||sp|| ***bi***", "<https://a.example|x *y*>", "[l](https://a.example)",
		"```go\nx\n```", "*a _b* c_", "<@1> <t:1:F> <:e:2>", "# h\n> q\n- i", "a & b < c > d \" e", "\\*x\\*", "`` a ` b ``",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for name, conv := range map[string]func(string) string{"slack": slackText, "markdown": markdownText} {
			marked := conv(s)
			html := htmlOf(marked)
			if err := markup.Validate(html, markup.HTML); err != nil {
				t.Fatalf("%s: HTML of %q is not valid: %v\n%s", name, s, err, html)
			}
			if !strings.ContainsAny(s, markChars) {
				if p := plainOf(marked); p != s {
					t.Fatalf("%s: plain text %q came out as %q", name, s, p)
				}
				if html != markup.EscapeHTML(s) {
					t.Fatalf("%s: plain text %q came out as HTML %q", name, s, html)
				}
			}
		}
	})
}

// markChars are the characters that may start a mark in either dialect
// (a line's first '#', '>' or '-' included); text without them is plain.
const markChars = "*_~|`<>[]\\&#-+\ufdd0\ufde0\ufdef"

// TestConvertPlainText is FuzzConvert's round trip on generated text.
func TestConvertPlainText(t *testing.T) {
	t.Parallel()
	words := []string{"disk", "full", "on", "db-1", "99%", "(api)", "é", "🚨", "\"q\"", "a.b", "x=1", "!", "\t", "\n", "  "}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := 0; j < 1+i%17; j++ {
			b.WriteString(words[(i*7+j*13)%len(words)])
			b.WriteByte(' ')
		}
		s := strings.Map(func(r rune) rune {
			if strings.ContainsRune(markChars, r) {
				return -1
			}
			return r
		}, b.String())
		for _, conv := range []func(string) string{slackText, markdownText} {
			marked := conv(s)
			if p := plainOf(marked); p != s {
				t.Fatalf("plain text %q came out as %q", s, p)
			}
			if h := htmlOf(marked); h != markup.EscapeHTML(s) {
				t.Fatalf("plain text %q came out as HTML %q", s, h)
			}
		}
	}
}

// BenchmarkConvertAdversarial converts inputs built to make a
// backtracking or rescanning converter quadratic: marks that never close,
// openers that never match, link starts without an end. ns/op over the
// sizes shows the time per byte stays flat.
func BenchmarkConvertAdversarial(b *testing.B) {
	for _, unit := range []string{"*a ", "_a ", "**a ", "`a ", "[a](http://x", "<a ", "||a ", "``a ", "*a _b ", "```a "} {
		for _, n := range []int{1 << 12, 1 << 16} {
			s := strings.Repeat(unit, n/len(unit))
			b.Run(strings.TrimSpace(unit)+"/"+itoaBench(n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for i := 0; i < b.N; i++ {
					_ = htmlOf(markdownText(s))
					_ = htmlOf(slackText(s))
				}
			})
		}
	}
}

func itoaBench(n int) string {
	if n >= 1<<16 {
		return "64KiB"
	}
	return "4KiB"
}
