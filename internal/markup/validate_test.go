package markup

import (
	"errors"
	"strings"
	"testing"
)

// docsExample is the MarkdownV2 sample from the Bot API documentation.
const docsExample = "*bold \\*text*\n" +
	"_italic \\*text_\n" +
	"__underline__\n" +
	"~strikethrough~\n" +
	"||spoiler||\n" +
	"*bold _italic bold ~italic bold strikethrough ||italic bold strikethrough spoiler||~ __underline italic bold___ bold*\n" +
	"[inline URL](http://www.example.com/)\n" +
	"[inline mention of a user](tg://user?id=123456789)\n" +
	"![👍](tg://emoji?id=5368324170671202286)\n" +
	"`inline fixed-width code`\n" +
	"```\npre-formatted fixed-width code block\n```\n" +
	"```python\npre-formatted fixed-width code block written in the Python programming language\n```\n" +
	">Block quotation started\n" +
	">Block quotation continued\n" +
	">The last line of the block quotation\n" +
	"**>The expandable block quotation started right after the previous block quotation\n" +
	">It is separated from the previous block quotation by an empty bold entity\n" +
	">The last line of the expandable block quotation with the expandability mark||"

// htmlExample is the HTML sample from the Bot API documentation.
const htmlExample = `<b>bold</b>, <strong>bold</strong>
<i>italic</i>, <em>italic</em>
<u>underline</u>, <ins>underline</ins>
<s>strikethrough</s>, <strike>strikethrough</strike>, <del>strikethrough</del>
<span class="tg-spoiler">spoiler</span>, <tg-spoiler>spoiler</tg-spoiler>
<b>bold <i>italic bold <s>italic bold strikethrough <span class="tg-spoiler">italic bold strikethrough spoiler</span></s> <u>underline italic bold</u></i> bold</b>
<a href="http://www.example.com/">inline URL</a>
<a href="tg://user?id=123456789">inline mention of a user</a>
<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>
<code>inline fixed-width code</code>
<pre>pre-formatted fixed-width code block</pre>
<pre><code class="language-python">pre-formatted fixed-width code block written in the Python programming language</code></pre>
<blockquote>Block quotation started\nBlock quotation continued\nThe last line of the block quotation</blockquote>
<blockquote expandable>Expandable block quotation started\nExpandable block quotation continued\nExpandable block quotation continued\nHidden by default part of the block quotation started\nExpandable block quotation continued\nThe last line of the block quotation</blockquote>`

type validateCase struct {
	name   string
	text   string
	plain  string // expected Plain when valid
	errMsg string // expected ParseError.Msg prefix when invalid
	offset int    // expected ParseError.Offset when invalid
}

func runValidateCases(t *testing.T, mode Mode, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tc.text, mode)
			if tc.errMsg == "" {
				if err != nil {
					t.Fatalf("Validate(%q) = %v, want nil", tc.text, err)
				}
				got, err := Plain(tc.text, mode)
				if err != nil || got != tc.plain {
					t.Fatalf("Plain(%q) = %q, %v; want %q", tc.text, got, err, tc.plain)
				}
				n, err := VisibleLen(tc.text, mode)
				if err != nil || n != UTF16Len(tc.plain) {
					t.Fatalf("VisibleLen(%q) = %d, %v; want %d", tc.text, n, err, UTF16Len(tc.plain))
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Validate(%q) = %v, want *ParseError %q", tc.text, err, tc.errMsg)
			}
			if !strings.HasPrefix(pe.Msg, tc.errMsg) || pe.Offset != tc.offset {
				t.Fatalf("Validate(%q) = %q at %d, want %q at %d", tc.text, pe.Msg, pe.Offset, tc.errMsg, tc.offset)
			}
			if _, err := Plain(tc.text, mode); !errors.As(err, &pe) {
				t.Fatalf("Plain(%q) error = %v, want *ParseError", tc.text, err)
			}
			if _, err := VisibleLen(tc.text, mode); !errors.As(err, &pe) {
				t.Fatalf("VisibleLen(%q) error = %v, want *ParseError", tc.text, err)
			}
		})
	}
}

func TestValidateHTML(t *testing.T) {
	t.Parallel()
	runValidateCases(t, HTML, []validateCase{
		{name: "plain", text: "just text", plain: "just text"},
		{name: "empty", text: "", plain: ""},
		{name: "docs example", text: htmlExample, plain: func() string { p, _ := Plain(htmlExample, HTML); return p }()},
		{name: "bold", text: "<b>x</b><strong>y</strong>", plain: "xy"},
		{name: "italic", text: "<i>x</i><em>y</em>", plain: "xy"},
		{name: "underline", text: "<u>x</u><ins>y</ins>", plain: "xy"},
		{name: "strike", text: "<s>x</s><strike>y</strike><del>z</del>", plain: "xyz"},
		{name: "spoiler", text: `<span class="tg-spoiler">x</span><tg-spoiler>y</tg-spoiler>`, plain: "xy"},
		{name: "link", text: `<a href="https://example.com/?a=1&amp;b=2">x</a>`, plain: "x"},
		{name: "link single quotes", text: `<a href='https://example.com/'>x</a>`, plain: "x"},
		{name: "link name token", text: `<a href=example.com>x</a>`, plain: "x"},
		{name: "mention", text: `<a href="tg://user?id=123456789">x</a>`, plain: "x"},
		{name: "custom emoji", text: `<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, plain: "👍"},
		{name: "code pre", text: `<code>x</code><pre>y</pre><pre><code class="language-go">z</code></pre>`, plain: "xyz"},
		{name: "blockquote", text: "<blockquote>x</blockquote><blockquote expandable>y</blockquote>", plain: "xy"},
		{name: "nested", text: "<b>a <i>b <u>c</u> <s>d</s></i></b>", plain: "a b c d"},
		{name: "upper case tag", text: "<B>x</B>", plain: "x"},
		{name: "short end tag", text: "<b>x</>", plain: "x"},
		{name: "end tag with space", text: "<b>x</b >", plain: "x"},
		{name: "named entities", text: "&lt;&gt;&amp;&quot;", plain: `<>&"`},
		{name: "numeric entities", text: "&#123;&#x1F600;&#38", plain: "{😀&"},
		{name: "entity without semicolon", text: "&lt b&gt", plain: "< b>"},
		{name: "unknown entity name", text: "&ltb;", plain: "&ltb;"},
		{name: "bare ampersand", text: "AT&T &copy; &#0; &#x;", plain: "AT&T &copy; &#0; &#x;"},
		{name: "bare greater than", text: "a > b", plain: "a > b"},
		{name: "ignored attribute", text: `<b class="x" data-y=z>x</b>`, plain: "x"},
		{name: "empty custom emoji not checked", text: `<tg-emoji emoji-id="x"></tg-emoji>`, plain: ""},
		{name: "less than", text: "a < b", errMsg: `Unsupported start tag ""`, offset: 2},
		{name: "unknown tag", text: "x<p>y</p>", errMsg: `Unsupported start tag "p"`, offset: 1},
		{name: "unclosed tag", text: "<b>x", errMsg: `Can't find end tag corresponding to start tag "b"`, offset: 0},
		{name: "unexpected end tag", text: "x</b>", errMsg: "Unexpected end tag", offset: 1},
		{name: "bad nesting", text: "<b><i>x</b></i>", errMsg: `Unmatched end tag, expected "</i>", found "</b>"`, offset: 7},
		{name: "unclosed start tag", text: "x<b", errMsg: "Unclosed start tag", offset: 1},
		{name: "unclosed end tag", text: "<b>x</b", errMsg: "Unclosed end tag", offset: 4},
		{name: "span without class", text: "<span>x</span>", errMsg: `Tag "span" must have class "tg-spoiler"`, offset: 0},
		{name: "bad emoji id", text: `<tg-emoji emoji-id="abc">👍</tg-emoji>`, errMsg: "Invalid custom emoji identifier specified", offset: 0},
		{name: "bad name token", text: `<a href=http://x>y</a>`, errMsg: "Unexpected end of name token", offset: 8},
		{name: "empty attribute name", text: `<b =x>y</b>`, errMsg: `Empty attribute name in the tag "b"`, offset: 0},
		{name: "lone surrogate", text: "&#xD83D;", errMsg: "Text contains invalid Unicode characters", offset: 0},
	})
}

func TestValidateMarkdownV2(t *testing.T) {
	t.Parallel()
	docsPlain := "bold *text\nitalic *text\nunderline\nstrikethrough\nspoiler\n" +
		"bold italic bold italic bold strikethrough italic bold strikethrough spoiler underline italic bold bold\n" +
		"inline URL\ninline mention of a user\n👍\ninline fixed-width code\n" +
		"pre-formatted fixed-width code block\n\n" +
		"pre-formatted fixed-width code block written in the Python programming language\n\n" +
		"Block quotation started\nBlock quotation continued\nThe last line of the block quotation\n" +
		"The expandable block quotation started right after the previous block quotation\n" +
		"It is separated from the previous block quotation by an empty bold entity\n" +
		"The last line of the expandable block quotation with the expandability mark"
	runValidateCases(t, MarkdownV2, []validateCase{
		{name: "docs example", text: docsExample, plain: docsPlain},
		{name: "empty", text: "", plain: ""},
		{name: "italic then underline", text: "_italic_\r__underline__", plain: "italic\runderline"},
		{name: "italic underline", text: "___italic underline_\r__", plain: "italic underline\r"},
		{name: "greedy underline", text: "___italic underline___", errMsg: "Can't find end of Italic entity", offset: 21},
		{name: "code keeps reserved", text: "`a_b*c.d[e]`", plain: "a_b*c.d[e]"},
		{name: "code escapes", text: "`a\\`b\\\\c`", plain: "a`b\\c"},
		{name: "pre keeps reserved", text: "```\na.b!c\n```", plain: "a.b!c\n"},
		{name: "pre language", text: "```go\nx := 1```", plain: "x := 1"},
		{name: "pre language without newline", text: "```go x```", plain: " x"},
		{name: "pre crlf", text: "```\r\nx```", plain: "x"},
		{name: "link with escaped paren", text: "[a](http://x.y/a_(b\\))", plain: "a"},
		{name: "link without url", text: "[a\\.b]", plain: "a.b"},
		{name: "nested entities", text: "*a _b ~c ||d||~_*", plain: "a b c d"},
		{name: "quote", text: ">a\n>b\nc", plain: "a\nb\nc"},
		{name: "quote at end", text: "x\n>a", plain: "x\na"},
		{name: "expandable quote", text: "**>a\n>b||\nc", plain: "a\nb\nc"},
		{name: "expandable quote crlf", text: ">a||\r\nb", plain: "a\r\nb"},
		{name: "spoiler in quote", text: ">||a||\nb", plain: "a\nb"},
		{name: "bold across quote lines", text: ">*a\n>b*", plain: "a\nb"},
		{name: "escaped newline continues quote", text: ">a\\\nb", plain: "a\nb"},
		{name: "custom emoji", text: "![👍](tg://emoji?id=5368324170671202286)", plain: "👍"},
		{name: "lone backslash", text: "\\é x\\", plain: "\\é x\\"},
		{name: "escaped backslash", text: "\\\\", plain: "\\"},
		{name: "unclosed bold", text: "a *b", errMsg: "Can't find end of Bold entity", offset: 2},
		{name: "unclosed pre", text: "```go\nx", errMsg: "Can't find end of PreCode entity", offset: 0},
		{name: "unclosed link url", text: "[a](http://x", errMsg: "Can't find end of a URL", offset: 4},
		{name: "quote mid line", text: "a>b", errMsg: "Character '>' is reserved", offset: 1},
		{name: "bold across quote end", text: ">*a\nb*", errMsg: "Can't find end of Bold entity", offset: 1},
		{name: "emoji without url", text: "![👍]", errMsg: "Custom emoji entity must contain a tg://emoji URL", offset: 6},
		{name: "emoji bad url", text: "![👍](http://x.y)", errMsg: "Custom emoji URL must have scheme tg", offset: 8},
		{name: "emoji bad id", text: "![👍](tg://emoji?id=x)", errMsg: "Invalid custom emoji identifier specified", offset: 8},
		{name: "single pipe", text: "a|b", errMsg: "Character '|' is reserved", offset: 1},
		{name: "bang", text: "hi!", errMsg: "Character '!' is reserved", offset: 2},
	})
}

func TestValidateMarkdownV2ReservedCharacters(t *testing.T) {
	t.Parallel()
	// What an unescaped reserved character between two letters leads to.
	unescaped := map[byte]string{
		'_': "Can't find end of Italic entity",
		'*': "Can't find end of Bold entity",
		'[': "Can't find end of TextUrl entity",
		'~': "Can't find end of Strikethrough entity",
		'`': "Can't find end of Code entity",
	}
	for _, c := range []byte("_*[]()~`>#+-=|{}.!") {
		escaped := "a\\" + string(c) + "b"
		if err := Validate(escaped, MarkdownV2); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", escaped, err)
		}
		if p, _ := Plain(escaped, MarkdownV2); p != "a"+string(c)+"b" {
			t.Errorf("Plain(%q) = %q", escaped, p)
		}
		raw := "a" + string(c) + "b"
		want, ok := unescaped[c]
		if !ok {
			want = "Character '" + string(c) + "' is reserved and must be escaped with the preceding '\\'"
		}
		var pe *ParseError
		if err := Validate(raw, MarkdownV2); !errors.As(err, &pe) || pe.Msg != want || pe.Offset != 1 {
			t.Errorf("Validate(%q) = %v, want %q at byte offset 1", raw, err, want)
		}
	}
	// Every ASCII character 1..126 can be escaped.
	for c := byte(1); c <= 126; c++ {
		s := "\\" + string(c)
		if p, err := Plain(s, MarkdownV2); err != nil || p != string(c) {
			t.Errorf("Plain(%q) = %q, %v", s, p, err)
		}
	}
}

func TestValidateNone(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "<b>", "*_[", "&"} {
		if err := Validate(s, None); err != nil {
			t.Errorf("Validate(%q, None) = %v", s, err)
		}
	}
	if err := Validate("x", Mode("Markdown")); err == nil {
		t.Error("Validate with an unknown mode succeeded")
	}
}

func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	err := Validate("a < b", HTML)
	want := `can't parse entities: Unsupported start tag "" at byte offset 2`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{"", None, ""}, {"none", None, ""}, {"Plain", None, ""}, {"html", HTML, ""}, {"HTML", HTML, ""},
		{"MarkdownV2", MarkdownV2, ""}, {"markdownv2", MarkdownV2, ""},
		{"Markdown", None, "MarkdownV2"}, {"rtf", None, "unknown parse mode"},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMode(%q) error = %v, want it to mention %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	t.Parallel()
	tests := map[string]int{"": 0, "abc": 3, "é": 1, "中": 1, "😀": 2, "👩\u200d💻": 5, "\xff": 1, "e\u0301": 2}
	for s, want := range tests {
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}
