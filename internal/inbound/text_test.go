package inbound

import (
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
)

func TestSlackText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"*bold* _it_ ~st~ `code`":                                    "bold it st code",
		"<https://a.example/x?a=1&amp;b=2|see here>":                 "see here (https://a.example/x?a=1&b=2)",
		"<https://a.example>":                                        "https://a.example",
		"<!here> <!channel> <@U1> <#C1|ops>":                         "@here @channel @U1 #ops",
		"<!date^1392734382^{date}|Feb 18, 2014>":                     "Feb 18, 2014",
		"a &lt;b&gt; &amp; c":                                        "a <b> & c",
		"&gt; quoted\nnot":                                           "quoted\nnot",
		"snake_case_name and 2*3*4":                                  "snake_case_name and 2*3*4",
		"```\nfenced\n```":                                           "fenced\n",
		"<!subteam^SAZ94GDB8|@oncall> please":                        "@oncall please",
		"*[FIRING:1]* _HighLatency_ (api prod)":                      "[FIRING:1] HighLatency (api prod)",
		"<mailto:ops@example.com|ops@example.com>":                   "ops@example.com (mailto:ops@example.com)",
		"*Alert:* HighLatency - `critical`\n*Description:* p99 > 2s": "Alert: HighLatency - critical\nDescription: p99 > 2s",
	} {
		if got := slackText(in); got != want {
			t.Errorf("slackText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdownText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"**bold** *it* _it_ __b__ ~~st~~ ||sp||":                "bold it it b st sp",
		"[docs](https://d.example/a_b) and <https://x.example>": "docs (https://d.example/a_b) and https://x.example",
		"# Title\n-# small\n> quote\n- item":                    "Title\nsmall\nquote\n• item",
		"<@123> <@!456> <@&789> <#42> <:ok:1234>":               "@123 @456 @789 #42 :ok:",
		"at <t:0:F>":         "at 1970-01-01 00:00 UTC",
		"`a**b**` \\*not\\*": "a**b** *not*",
		"snake_case and 2*3": "snake_case and 2*3",
	} {
		if got := markdownText(in); got != want {
			t.Errorf("markdownText(%q) = %q, want %q", in, got, want)
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
