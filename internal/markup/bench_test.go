package markup

import (
	"strconv"
	"strings"
	"testing"
)

// benchHTML builds an HTML document with at most n visible characters:
// paragraphs with nested formatting, links, code blocks, quotes and emoji.
func benchHTML(n int) string {
	var b strings.Builder
	visible := 0
	for i := 0; ; i++ {
		p := "<b>Alert " + strconv.Itoa(i) + "</b>: disk usage on <i>host-" + strconv.Itoa(i%7) +
			"</i> is <u>above <s>80%</s> 90%</u> 😀 — see " +
			`<a href="https://grafana.example.com/d/abc?var-host=` + strconv.Itoa(i) + `&amp;from=now-1h">the dashboard</a>` +
			" and the log excerpt below &lt;tail&gt;.\n" +
			`<pre><code class="language-log">` + strings.Repeat("2024-06-01T12:00:00Z ERROR something failed &amp; retried\n", 3) + "</code></pre>\n" +
			"<blockquote>" + strings.Repeat("quoted text with a very_long_word_without_spaces_in_it ", 4) + "</blockquote>\n\n"
		v, err := VisibleLen(p, HTML)
		if err != nil {
			panic(err)
		}
		if visible+v > n {
			return b.String()
		}
		visible += v
		b.WriteString(p)
	}
}

func BenchmarkSplit(b *testing.B) {
	doc := benchHTML(20000)
	n, err := VisibleLen(doc, HTML)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	if n < 19000 {
		b.Fatalf("benchmark document has %d visible characters, want about 20000", n)
	}
	b.ResetTimer()
	for b.Loop() {
		parts, err := Split(doc, HTML, MaxMessageLen)
		if err != nil || len(parts) < 5 {
			b.Fatalf("Split: %d parts, %v", len(parts), err)
		}
	}
}
