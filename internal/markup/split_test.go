package markup

import (
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
)

// modeName names a mode in test output.
func modeName(m Mode) string {
	if m == None {
		return "None"
	}
	return string(m)
}

// randomLimit picks limits from 1..4096, mostly small enough to force cuts.
func randomLimit(r *rand.Rand, text string) int {
	switch r.Intn(4) {
	case 0:
		return 1 + r.Intn(8)
	case 1:
		return 1 + r.Intn(4096)
	default:
		n := UTF16Len(text)/(1+r.Intn(6)) + 1
		return min(n, 4096)
	}
}

func TestSplitRandomDocuments(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{None, HTML, MarkdownV2} {
		t.Run(modeName(mode), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewSource(int64(len(mode)) + 20240601))
			valid := 0
			docs := 600
			if testing.Short() {
				docs = 200
			}
			for i := 0; i < docs; i++ {
				text := genDoc(r, mode)
				if Validate(text, mode) != nil {
					continue
				}
				valid++
				limit := randomLimit(r, text)
				if msg := checkSplit(text, mode, limit); msg != "" {
					t.Fatalf("Split(%q, %s, %d): %s", text, mode, limit, msg)
				}
			}
			if valid < docs*3/4 {
				t.Fatalf("only %d of %d generated documents are valid; the generator is broken", valid, docs)
			}
		})
	}
}

func TestSplitQuick(t *testing.T) {
	t.Parallel()
	// Arbitrary strings: valid ones must split correctly, invalid ones must
	// be split as plain text.
	f := func(text string, m uint8, limit uint16) bool {
		mode := []Mode{None, HTML, MarkdownV2}[m%3]
		msg := checkSplit(text, mode, int(limit%4096)+1)
		if msg != "" {
			t.Logf("Split(%q, %s, %d): %s", text, mode, int(limit%4096)+1, msg)
		}
		return msg == ""
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000, Rand: rand.New(rand.NewSource(7))}); err != nil {
		t.Fatal(err)
	}
}

func TestSplitExamples(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 30)
	tests := []struct {
		name  string
		text  string
		mode  Mode
		limit int
		want  []string
	}{
		{"fits", "<b>short</b>", HTML, 10, []string{"<b>short</b>"}},
		{"fits default limit", strings.Repeat("a", MaxMessageLen), None, 0, []string{strings.Repeat("a", MaxMessageLen)}},
		{"paragraph first", "aa bb\ncc\n\ndd ee", None, 12, []string{"aa bb\ncc\n\n", "dd ee"}},
		{"line before space", "aa bb\ncc dd", None, 10, []string{"aa bb\n", "cc dd"}},
		{"space", "aaa bbb ccc", None, 9, []string{"aaa bbb ", "ccc"}},
		{"hard cut", long, None, 12, []string{long[:12], long[12:24], long[24:]}},
		{"surrogate pair kept", "a😀b", None, 2, []string{"a", "😀", "b"}},
		{"wide char alone", "😀😀", None, 1, []string{"😀", "😀"}},
		{"combining mark kept", "abe\u0301", None, 3, []string{"ab", "e\u0301"}},
		{"entity kept", "a&amp;b&lt;c", HTML, 2, []string{"a&amp;", "b&lt;", "c"}},
		{"reopen html", "<b>aaa <i>bbb ccc</i></b>", HTML, 8, []string{"<b>aaa <i>bbb </i></b>", "<b><i>ccc</i></b>"}},
		{"reopen attributes", `<a href="http://x.y/?a=1&amp;b=2">aaa bbb</a>`, HTML, 4, []string{`<a href="http://x.y/?a=1&amp;b=2">aaa </a>`, `<a href="http://x.y/?a=1&amp;b=2">bbb</a>`}},
		{"reopen pre code", "<pre><code class=\"language-go\">aa\nbb</code></pre>", HTML, 3, []string{"<pre><code class=\"language-go\">aa\n</code></pre>", "<pre><code class=\"language-go\">bb</code></pre>"}},
		{"bare ampersand escaped in parts", "a&b c&d", HTML, 4, []string{"a&amp;b ", "c&amp;d"}},
		{"link text as url", "<a>ab cd</a>", HTML, 3, []string{`<a href="ab cd">ab </a>`, `<a href="ab cd">cd</a>`}},
		{"escape kept", `a\.b\.c`, MarkdownV2, 2, []string{`a\.`, `b\.`, "c"}},
		{"reopen markdown", "*aa _bb cc_*", MarkdownV2, 6, []string{"*aa _bb _*", "*_cc_*"}},
		{"italic then underline", "_aa __bb cc__ dd_", MarkdownV2, 6, []string{"_aa __bb __**_", "_**__cc__ dd_"}},
		{"markdown link", "[aa bb](http://x.y/\\))", MarkdownV2, 3, []string{"[aa ](http://x.y/\\))", "[bb](http://x.y/\\))"}},
		{"markdown link text as url", "[aa bb]", MarkdownV2, 3, []string{"[aa ](aa bb)", "[bb](aa bb)"}},
		{"markdown pre", "```go\naa\nbb```", MarkdownV2, 3, []string{"```go\naa\n```", "```go\nbb```"}},
		{"markdown pre keeps carriage return", "```\naa\rbb```", MarkdownV2, 2, []string{"```\naa```", "```\r\n\rb```", "```\nb```"}},
		{"quote lines", ">aa\n>bb\ncc", MarkdownV2, 4, []string{">aa\n", ">bb\n", "cc"}},
		{"expandable quote", "**>aa bb\n>cc||\ndd", MarkdownV2, 4, []string{"**>aa ||", ">bb||\n", ">cc||\n", "dd"}},
		{"quote with bold across lines", ">*aa\n>bb*", MarkdownV2, 3, []string{">*aa*\n", ">*bb*"}},
		{"lone backslash escaped in parts", "a\\é b", MarkdownV2, 3, []string{"a\\\\é", " b"}},
		{"plain fallback", "<b>aa bb", HTML, 4, []string{"<b>a", "a bb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Split(tt.text, tt.mode, tt.limit)
			if tt.name == "plain fallback" {
				if _, ok := err.(*ParseError); !ok {
					t.Fatalf("error = %v, want *ParseError", err)
				}
			} else if err != nil {
				t.Fatalf("error = %v", err)
			}
			if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Fatalf("Split(%q, %d)\n got %q\nwant %q", tt.text, tt.limit, got, tt.want)
			}
			if msg := checkSplit(tt.text, tt.mode, tt.limit); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

func TestSplitUnknownMode(t *testing.T) {
	t.Parallel()
	if _, err := Split("x", Mode("Markdown"), 10); err == nil {
		t.Fatal("Split with an unknown mode succeeded")
	}
}

// trickyDocs are documents with constructs the random generators rarely
// produce; TestSplitEveryLimit cuts them at every possible limit.
var trickyDocs = []struct {
	text string
	mode Mode
}{
	{docsExample, MarkdownV2},
	{htmlExample, HTML},
	{"*>quote in bold\n*after", MarkdownV2},
	{">a b||\r\nc d", MarkdownV2},
	{">a\\\nb c\n>d", MarkdownV2},
	{">```\nco de\n>x```\n>tail", MarkdownV2},
	{">`co\nde` x\ny", MarkdownV2},
	{"_a __b c__ d_ __e _f g_ h__", MarkdownV2},
	{"___a b_\r__ _c __d e__\r_", MarkdownV2},
	{"*a\n>b c\n>d\n*e", MarkdownV2},
	{"~_x\n>b c\n>d e||\nf_~", MarkdownV2},
	{"||a ||||b c||", MarkdownV2},
	{">||a b||||\n>c||", MarkdownV2},
	{"[a [b c](http://x.y) d](http://z.w)", MarkdownV2},
	{"[a b] [c *d e*]", MarkdownV2},
	{"```go\n\rab\r\ncd```", MarkdownV2},
	{"```\n\n\nab```", MarkdownV2},
	{"```go x y```", MarkdownV2},
	{"```a`b` c```", MarkdownV2},
	{"![👍 👍](tg://emoji?id=1) x", MarkdownV2},
	{"a\\é b\\ c\\", MarkdownV2},
	{"\\\n>not a quote", MarkdownV2},
	{"**>a\n>b\n**>c d||", MarkdownV2},
	{"<a>x y z</a> <a href=\"\">u v</a>", HTML},
	{"<pre><code class=\"language-go\">a\nb c</code></pre><pre>d e</pre>", HTML},
	{"&lt b &ampx &#1234567890 &#x1F600 c&d", HTML},
	{"<blockquote expandable><b>a <i>b</i></b>\nc</blockquote>", HTML},
	{"<tg-emoji emoji-id=\"1\">👍 👍</tg-emoji> <tg-emoji emoji-id=\"2\">1️⃣</tg-emoji>", HTML},
	{"<b>a</><i>b c</ > d", HTML},
	{"<B CLASS=x>a b</b>", HTML},
}

func TestSplitEveryLimit(t *testing.T) {
	t.Parallel()
	for _, doc := range trickyDocs {
		if err := Validate(doc.text, doc.mode); err != nil {
			t.Errorf("Validate(%q): %v", doc.text, err)
			continue
		}
		n, _ := VisibleLen(doc.text, doc.mode)
		for limit := 1; limit <= n; limit++ {
			if msg := checkSplit(doc.text, doc.mode, limit); msg != "" {
				t.Errorf("Split(%q, %d): %s", doc.text, limit, msg)
				break
			}
		}
	}
}
