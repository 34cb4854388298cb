package inbound

import (
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/markup"
)

// conversion is what a converter makes of an input: its plain text and
// its Telegram HTML.
type conversion struct{ plain, html string }

// checkConversions runs conv on each input and compares both renderings;
// every HTML must also be valid as Telegram parses it.
func checkConversions(t *testing.T, conv func(string) string, cases map[string]conversion) {
	t.Helper()
	for in, want := range cases {
		marked := conv(in)
		plain, html := plainOf(marked), htmlOf(marked)
		if plain != want.plain {
			t.Errorf("plain of %q = %q, want %q", in, plain, want.plain)
		}
		if html != want.html {
			t.Errorf("HTML of %q = %q, want %q", in, html, want.html)
		}
		if err := markup.Validate(html, markup.HTML); err != nil {
			t.Errorf("HTML of %q is not valid Telegram HTML: %v\n%s", in, err, html)
		}
	}
}

func TestSlackText(t *testing.T) {
	t.Parallel()
	checkConversions(t, slackText, map[string]conversion{
		"*bold* _it_ ~st~ `code`": {"bold it st code", "<b>bold</b> <i>it</i> <s>st</s> <code>code</code>"},
		"<https://a.example/x?a=1&amp;b=2|see here>": {"see here (https://a.example/x?a=1&b=2)",
			`<a href="https://a.example/x?a=1&amp;b=2">see here</a>`},
		"<https://a.example>":                    {"https://a.example", `<a href="https://a.example">https://a.example</a>`},
		"<!here> <!channel> <@U1> <#C1|ops>":     {"@here @channel @U1 #ops", "@here @channel @U1 #ops"},
		"<!date^1392734382^{date}|Feb 18, 2014>": {"Feb 18, 2014", "Feb 18, 2014"},
		"a &lt;b&gt; &amp; c":                    {"a <b> & c", "a &lt;b&gt; &amp; c"},
		"&gt; quoted\nnot":                       {"quoted\nnot", "quoted\nnot"},
		"snake_case_name and 2*3*4":              {"snake_case_name and 2*3*4", "snake_case_name and 2*3*4"},
		"```\nfenced\n```":                       {"fenced\n", "<pre>fenced\n</pre>"},
		"```a *b* &lt;c&gt;```":                  {"a *b* <c>", "<pre>a *b* &lt;c&gt;</pre>"},
		"<!subteam^SAZ94GDB8|@oncall> please":    {"@oncall please", "@oncall please"},
		"*[FIRING:1]* _HighLatency_ (api prod)":  {"[FIRING:1] HighLatency (api prod)", "<b>[FIRING:1]</b> <i>HighLatency</i> (api prod)"},
		"<mailto:ops@example.com|ops@example.com>": {"ops@example.com",
			`<a href="mailto:ops@example.com">ops@example.com</a>`},
		"*Alert:* HighLatency - `critical`\n*Description:* p99 > 2s": {"Alert: HighLatency - critical\nDescription: p99 > 2s",
			"<b>Alert:</b> HighLatency - <code>critical</code>\n<b>Description:</b> p99 &gt; 2s"},
		// Marks that do not close, or cross, stay text.
		"*open and _half* closed_":      {"open and _half closed_", "<b>open and _half</b> closed_"},
		"* not bold *":                  {"* not bold *", "* not bold *"},
		"*two\nlines*":                  {"*two\nlines*", "*two\nlines*"},
		"`unclosed and *b*":             {"`unclosed and b", "`unclosed and <b>b</b>"},
		"<javascript:alert(1)|x>":       {"x (javascript:alert(1))", "x (javascript:alert(1))"},
		"*<https://a.example|in bold>*": {"in bold (https://a.example)", `<b><a href="https://a.example">in bold</a></b>`},
		"x \ufdd0y\ufde0":               {"x \ufffdy\ufffd", "x \ufffdy\ufffd"},
		// Slack's own examples (api.slack.com, "Formatting text for app surfaces").
		"This is *bold*, this is _italic_, this is ~strikethrough~": {"This is bold, this is italic, this is strikethrough",
			"This is <b>bold</b>, this is <i>italic</i>, this is <s>strikethrough</s>"},
		"<http://www.example.com|This message *is* a link>": {"This message is a link (http://www.example.com)",
			`<a href="http://www.example.com">This message <b>is</b> a link</a>`},
		"Hey <@U0G9QF9C6>, thanks for submitting your report.": {"Hey @U0G9QF9C6, thanks for submitting your report.",
			"Hey @U0G9QF9C6, thanks for submitting your report."},
		"<!date^1392734382^Posted {date_num} {time_secs}|Posted 2014-02-18 6:39:42 AM PST>": {
			"Posted 2014-02-18 6:39:42 AM PST", "Posted 2014-02-18 6:39:42 AM PST"},
	})
}

func TestMarkdownText(t *testing.T) {
	t.Parallel()
	checkConversions(t, markdownText, map[string]conversion{
		"**bold** *it* _it_ __b__ ~~st~~ ||sp||": {"bold it it b st sp",
			"<b>bold</b> <i>it</i> <i>it</i> <u>b</u> <s>st</s> <tg-spoiler>sp</tg-spoiler>"},
		"[docs](https://d.example/a_b) and <https://x.example>": {"docs (https://d.example/a_b) and https://x.example",
			`<a href="https://d.example/a_b">docs</a> and <a href="https://x.example">https://x.example</a>`},
		"# Title\n-# small\n> quote\n- item":      {"Title\nsmall\nquote\n• item", "<b>Title</b>\nsmall\nquote\n• item"},
		"<@123> <@!456> <@&789> <#42> <:ok:1234>": {"@123 @456 @789 #42 :ok:", "@123 @456 @789 #42 :ok:"},
		"at <t:0:F>":           {"at 1970-01-01 00:00 UTC", "at 1970-01-01 00:00 UTC"},
		"`a**b**` \\*not\\*":   {"a**b** *not*", "<code>a**b**</code> *not*"},
		"snake_case and 2*3":   {"snake_case and 2*3", "snake_case and 2*3"},
		"p99 < 2s & <b>":       {"p99 < 2s & <b>", "p99 &lt; 2s &amp; &lt;b&gt;"},
		"**a *b* c**":          {"a b c", "<b>a <i>b</i> c</b>"},
		"**a __b** c__":        {"a __b c__", "<b>a __b</b> c__"},
		"||a **b||":            {"a **b", "<tg-spoiler>a **b</tg-spoiler>"},
		"```go\nx := `y`\n```": {"x := `y`\n", "<pre>x := `y`\n</pre>"},
		"[**bold** label](<https://e.example/a> \"t\")": {"bold label (https://e.example/a)",
			`<a href="https://e.example/a"><b>bold</b> label</a>`},
		"[x](javascript:alert(1))": {"[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		// Discord's own examples (support.discord.com, "Markdown Text 101").
		"*italics* or _italics_":              {"italics or italics", "<i>italics</i> or <i>italics</i>"},
		"__*underline italics*__":             {"underline italics", "<u><i>underline italics</i></u>"},
		"__**underline bold**__":              {"underline bold", "<u><b>underline bold</b></u>"},
		"***bold italics***":                  {"bold italics", "<b><i>bold italics</i></b>"},
		"__***underline bold italics***__":    {"underline bold italics", "<u><b><i>underline bold italics</i></b></u>"},
		"~~Strikethrough~~":                   {"Strikethrough", "<s>Strikethrough</s>"},
		"||spoiler||":                         {"spoiler", "<tg-spoiler>spoiler</tg-spoiler>"},
		"## Smaller Header":                   {"Smaller Header", "<b>Smaller Header</b>"},
		"[Masked Links](https://discord.com)": {"Masked Links (https://discord.com)", `<a href="https://discord.com">Masked Links</a>`},
		">>> multi-line quote\nsecond line":   {"multi-line quote\nsecond line", "multi-line quote\nsecond line"},
	})
}

// TestHTMLOfUnbalanced feeds the HTML writer marks a cut leaves unpaired
// or crossed: the HTML stays valid.
func TestHTMLOfUnbalanced(t *testing.T) {
	t.Parallel()
	o, c := func(st style) string { return string(markOpen + rune(st)) }, func(st style) string { return string(markClose + rune(st)) }
	for in, want := range map[string]string{
		"a" + c(stBold) + "b": "ab",
		o(stBold) + "a" + o(stItalic) + "b" + c(stBold) + "c" + c(stItalic): "<b>a<i>b</i></b><i>c</i>",
		o(stBold) + "open": "<b>open</b>",
		o(stCode) + "a" + o(stBold) + "b" + c(stBold) + c(stCode): "<code>ab</code>",
		o(stBold) + o(stPre) + "p" + c(stPre) + c(stBold):         "<b>p</b>",
		o(stLink) + "no end": "no end",
		o(stBold) + o(stBold) + "x" + c(stBold) + "y" + c(stBold): "<b>xy</b>",
		linkTo("https://a.example/?q=\"<>", "l"):                  `<a href="https://a.example/?q=&quot;&lt;&gt;">l</a>`,
	} {
		got := htmlOf(in)
		if got != want {
			t.Errorf("htmlOf(%q) = %q, want %q", in, got, want)
		}
		if err := markup.Validate(got, markup.HTML); err != nil {
			t.Errorf("htmlOf(%q) = %q is not valid: %v", in, got, err)
		}
	}
}

func TestColorSeverity(t *testing.T) {
	t.Parallel()
	for c, want := range map[string]alerts.Severity{
		"danger": alerts.SeverityCritical, "#FF0000": alerts.SeverityCritical, "992D22": alerts.SeverityCritical, "e74c3c": alerts.SeverityCritical,
		"warning": alerts.SeverityWarning, "#FF9900": alerts.SeverityWarning, "f1c40f": alerts.SeverityWarning, "": alerts.SeverityWarning,
		"good": alerts.SeverityInfo, "00e804": alerts.SeverityInfo, "2ECC71": alerts.SeverityInfo, "95A5A6": alerts.SeverityInfo, "0076D7": alerts.SeverityInfo,
	} {
		if got := colorSeverity(c); got != want {
			t.Errorf("colorSeverity(%q) = %s, want %s", c, got, want)
		}
	}
}
