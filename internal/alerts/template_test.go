package alerts

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

// reserved holds every character either parse mode gives a meaning to.
const reserved = "_*[]()~`>#+-=|{}.!\\<>&\"'"

// renderOne renders a for a route of the given mode and template.
func renderOne(t *testing.T, mode, tmpl string, a Alert) (string, markup.Mode) {
	t.Helper()
	src := "routes:\n  - name: r\n    parse_mode: " + mode + "\n    destinations: [1]\n"
	if tmpl != "" {
		src += "    template: " + yamlQuote(tmpl) + "\n"
	}
	r := newTestRouter(t, src, &recorder{})
	if err := a.Normalize(testNow); err != nil {
		t.Fatal(err)
	}
	return r.render(&a, r.Table().routes[0])
}

// yamlQuote writes s as a double-quoted YAML scalar.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestBuiltinTemplateEscapesEveryReservedCharacter(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"HTML", "MarkdownV2", "plain"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := Alert{
				Title:    "T " + reserved,
				Body:     "B " + reserved + "\nsecond line " + reserved,
				Severity: SeverityWarning,
				Source:   "S" + reserved,
				URL:      "https://example.com/p_(a)/" + strings.NewReplacer(" ", "", "`", "", "<", "", ">", "", "\"", "", "\\", "", "{", "", "}", "", "|", "").Replace(reserved) + "?q=a&b=\"c\")",
				Labels:   map[string]string{"k" + reserved: "v" + reserved},
			}
			text, got := renderOne(t, mode, "", a)
			want, _ := markup.ParseMode(mode)
			if got != want {
				t.Fatalf("rendered in mode %q, want %q (the built-in template fell back):\n%s", got, want, text)
			}
			if err := markup.Validate(text, got); err != nil {
				t.Fatalf("invalid %s: %v\n%s", mode, err, text)
			}
			plain, err := markup.Plain(text, got)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{a.Title, "B " + reserved, "second line " + reserved, "k" + reserved + "=v" + reserved, "S" + reserved} {
				if !strings.Contains(plain, s) {
					t.Errorf("the reader does not see %q in:\n%s", s, plain)
				}
			}
			if got != markup.None && !strings.Contains(text, linkTo(got, a.URL)) {
				t.Errorf("the title is not linked to %q:\n%s", a.URL, text)
			}
		})
	}
}

// linkTo is the opening of a link to url as the mode writes it.
func linkTo(mode markup.Mode, url string) string {
	if mode == markup.HTML {
		return `<a href="` + markup.EscapeHTML(url) + `">`
	}
	return "](" + strings.NewReplacer(`\`, `\\`, `)`, `\)`).Replace(url) + ")"
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	a := Alert{Title: "a_b <c>", Body: "x.y (z) & more text", URL: "https://h.test/q?a=1&b=(2)", Severity: SeverityCritical,
		Labels: map[string]string{"team": "db_1", "env": "prod"}}
	tests := []struct {
		mode, tmpl, want string
	}{
		{"HTML", `{{ link .Title .URL }}`, `<a href="https://h.test/q?a=1&amp;b=(2)">a_b &lt;c&gt;</a>`},
		{"MarkdownV2", `{{ link .Title .URL }}`, `[a\_b <c\>](https://h.test/q?a=1&b=(2\))`},
		{"plain", `{{ link .Title .URL }}`, `a_b <c> (https://h.test/q?a=1&b=(2))`},
		{"HTML", `{{ link "" .URL }}`, `<a href="https://h.test/q?a=1&amp;b=(2)">https://h.test/q?a=1&amp;b=(2)</a>`},
		{"HTML", `{{ link .Title "" }}`, `a_b &lt;c&gt;`},
		{"MarkdownV2", `{{ link .Title "not a url" }}`, `a\_b <c\> \(not a url\)`},
		{"HTML", `{{ link "x" "javascript:alert(1)" }}`, `x (javascript:alert(1))`},
		{"HTML", `{{ link "mail" "mailto:a@b.test" }} {{ link "t" "tg://user?id=1" }}`, `<a href="mailto:a@b.test">mail</a> <a href="tg://user?id=1">t</a>`},
		{"HTML", `{{ bold (link .Title .URL) }}`, `<b><a href="https://h.test/q?a=1&amp;b=(2)">a_b &lt;c&gt;</a></b>`},
		{"MarkdownV2", `{{ bold .Title }} {{ italic .Body }}`, `*a\_b <c\>* _x\.y \(z\) & more text_`},
		{"HTML", `{{ code .Title }}`, `<code>a_b &lt;c&gt;</code>`},
		{"MarkdownV2", "{{ code .Title }} {{ code \"a`b\\\\c\" }}", "`a_b <c>` `a\\`b\\\\c`"},
		{"MarkdownV2", `{{ upper .Title }}`, `A\_B <C\>`},
		{"HTML", `{{ lower "<B>" }}`, `&lt;b&gt;`},
		{"MarkdownV2", `{{ truncate 5 .Body }}`, `x\.y…`},
		{"HTML", `{{ .Body | truncate 8 }}`, `x.y (z)…`},
		{"MarkdownV2", `{{ join ", " .Labels }}`, `env\=prod, team\=db\_1`},
		{"MarkdownV2", `{{ text "(resolved)" }} {{ .Label "team" }} [{{ .Label "none" }}]`, `\(resolved\) db\_1 []`},
		{"HTML", `{{ raw "<i>as is</i>" }}`, `<i>as is</i>`},
		{"HTML", `{{ bold (raw "<i>as is</i>") }}`, `<b><i>as is</i></b>`},
		{"HTML", `{{ range .Labels }}{{ .Name }}:{{ .Value }} {{ end }}`, `env:prod team:db_1`},
		{"HTML", `{{ .Emoji }}{{ if eq .Severity "critical" }}!{{ end }} {{ .Time }}`, "🚨! 2026-11-30T12:00:00Z"},
		{"MarkdownV2", `{{ .Time }} {{ .Route }}`, `2026\-11\-30T12:00:00Z r`},
	}
	for _, tt := range tests {
		t.Run(tt.mode+" "+tt.tmpl, func(t *testing.T) {
			t.Parallel()
			got, mode := renderOne(t, tt.mode, tt.tmpl, a)
			if want, _ := markup.ParseMode(tt.mode); mode != want {
				t.Fatalf("fell back to %q: %s", mode, got)
			}
			if got != tt.want {
				t.Fatalf("rendered\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A template whose output the parse mode rejects for some alert sends the
// built-in plain text message instead of failing the alert.
func TestInvalidRenderingFallsBackToPlain(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	src := "routes:\n  - name: r\n    parse_mode: HTML\n    template: '{{ raw .Body }}'\n    destinations: [1]\n"
	r := newTestRouter(t, src, &recorder{})
	r.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	a := Alert{Title: "t <1>", Body: "<b>unclosed", Severity: SeverityWarning}
	if err := a.Normalize(testNow); err != nil {
		t.Fatal(err)
	}
	text, mode := r.render(&a, r.Table().routes[0])
	if mode != markup.None || !strings.HasPrefix(text, "⚠️ t <1>") || !strings.Contains(text, "<b>unclosed") {
		t.Fatalf("fallback %q in mode %q", text, mode)
	}
	if !strings.Contains(logs.String(), "route=r") || strings.Contains(logs.String(), "unclosed") {
		t.Errorf("log should name the route but not the alert's text: %s", logs.String())
	}
	// A valid body renders as the template says.
	a.Body = "<i>ok</i>"
	if text, mode := r.render(&a, r.Table().routes[0]); mode != markup.HTML || text != "<i>ok</i>" {
		t.Fatalf("valid raw body: %q in %q", text, mode)
	}
	// A runtime error of the template falls back too.
	r2 := newTestRouter(t, "routes:\n  - name: r\n    template: '{{ .Title }}{{ if .Labels }}{{ (index .Labels 1).Name }}{{ end }}'\n    destinations: [1]\n", &recorder{})
	a.Labels = map[string]string{"only": "one"}
	if text, mode := r2.render(&a, r2.Table().routes[0]); mode != markup.None || !strings.Contains(text, "t <1>") {
		t.Fatalf("runtime error: %q in %q", text, mode)
	}
}

func TestLongMessagesAreShortened(t *testing.T) {
	t.Parallel()
	labels := map[string]string{}
	for i := 0; i < MaxLabels; i++ {
		labels[strings.Repeat(string(rune('a'+i%26)), 1+i/26)] = strings.Repeat("&", 500)
	}
	a := Alert{Title: strings.Repeat("<", MaxTitleLen), Body: strings.Repeat("😀&", MaxBodyLen/2), Labels: labels, URL: "https://x.test/"}
	for _, mode := range []string{"HTML", "MarkdownV2", "plain"} {
		text, got := renderOne(t, mode, "", a)
		if want, _ := markup.ParseMode(mode); got != want {
			t.Errorf("%s: fell back to %q", mode, got)
		}
		if n := markup.UTF16Len(text); n > 32768 {
			t.Errorf("%s: %d UTF-16 units, over the limit", mode, n)
		}
		if err := markup.Validate(text, got); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
		if !strings.Contains(text, strings.Repeat(markup.Escape("<", got), 10)) {
			t.Errorf("%s: the title is missing", mode)
		}
	}
	// A long body is cut (visibly) before small labels are dropped.
	long := Alert{Title: "t", Body: strings.Repeat("w && ", MaxBodyLen/5), Labels: map[string]string{"team": "db"}}
	text, _ := renderOne(t, "HTML", "", long)
	if n := markup.UTF16Len(text); n > 32768 || !strings.Contains(text, "…") || !strings.Contains(text, "team=<code>db</code>") {
		t.Errorf("long body: %d units, labels kept: %v, cut visibly: %v", n, strings.Contains(text, "team="), strings.Contains(text, "…"))
	}
	// With a tiny limit only the title is left, shortened.
	r := newTestRouter(t, "routes:\n  - name: r\n    destinations: [1]\n", &recorder{})
	r.cfg.MaxTextLen = 100
	b := a
	if err := b.Normalize(testNow); err != nil {
		t.Fatal(err)
	}
	text, mode := r.render(&b, r.Table().routes[0])
	if mode != markup.None || markup.UTF16Len(text) > 100 || !strings.HasPrefix(text, "ℹ️ <<<") {
		t.Fatalf("tiny limit: %q (%d units) in %q", text, markup.UTF16Len(text), mode)
	}
}

// What lands in Redis is the rendered message (the routing contract end to
// end, without HTTP).
func TestDispatchStoresRenderedMessages(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	r := newTestRouter(t, "routes:\n  - name: md\n    parse_mode: MarkdownV2\n    destinations: [{chat: -100, thread: 3}]\n", b.enq)
	res, err := r.Dispatch(context.Background(), []Alert{{Title: "CPU 99.5% (db-1)", Severity: "critical", Status: "resolved", Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	m := b.task(t, "critical", res.Messages[0].TaskID)
	if m.Text != `✅ *CPU 99\.5% \(db\-1\)* \(resolved\)` || m.ParseMode != "MarkdownV2" || m.Chat != "-100" || m.MessageThreadID != 3 {
		t.Fatalf("stored %+v", m)
	}
}
