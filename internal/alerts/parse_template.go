package alerts

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/markup"
)

// templateFix is the fix for a template Go cannot parse or execute.
const templateFix = "see the template syntax and helpers in docs/ROUTING.md"

// messageDataFix names what a message template can use, for a template
// that asks for something else.
const messageDataFix = `a message template knows .Title .Body .Severity .Status .Source .URL .Fingerprint .Time .Route .Emoji .Resolved .Labels and .Label "name"`

// template parses a route's message template and tries it on sample
// alerts: a template that fails for them (unknown field, wrong helper
// arguments, markup the parse mode rejects, an empty message for an alert
// with every field set) is a load error. In this trial raw escapes its
// argument like text: what raw inserts is the sender's business, checked
// (with a fallback) when a real alert is rendered.
func (p *parser) template(n *yaml.Node, path, src, name string, mode markup.Mode) *template.Template {
	// The template is named "template" rather than after the route: route
	// names may hold characters that would confuse the error positions.
	tmpl, err := newTemplate("template", mode).Parse(src)
	if err != nil {
		p.templateProblem(n, path, err)
		return nil
	}
	trial, err := tmpl.Clone()
	if err != nil {
		p.templateProblem(n, path, err)
		return nil
	}
	h := helpers{mode}
	trial.Funcs(template.FuncMap{"raw": h.text})
	for i, a := range sampleAlerts() {
		var buf cappedBuffer
		if err := trial.Execute(&buf, newMessageData(&a, name, mode, renderLimits{bodyRunes: -1})); err != nil {
			p.templateProblem(n, path, err)
			return nil
		}
		text := strings.TrimSpace(buf.String())
		if err := markup.Validate(text, mode); err != nil {
			p.Report(n, path, fmt.Sprintf("renders invalid %s for a sample %s alert (%s)", modeName(mode), a.Status, err),
				`write literal text through {{ text "..." }} or escape it by hand`)
			return nil
		}
		if i == 0 && strings.TrimSpace(mustPlain(text, mode)) == "" {
			p.Report(n, path, "renders an empty message for an alert with every field set",
				"make it print something for every alert: Telegram refuses empty messages")
			return nil
		}
	}
	return tmpl
}

// templateErrRE takes a text/template error apart: template name, line,
// optional column, message.
var templateErrRE = regexp.MustCompile(`^template: [^:]*:(\d+)(?::(\d+))?: (?s:(.*))$`)

// executingRE finds the template name in an execution error, which is the
// route's name and differs between routes sharing the defaults template.
var executingRE = regexp.MustCompile(`executing "[^"]*" at `)

// templateProblem reports a template error at its position in the file:
// the template's own line and column, counted from where its text starts
// in the YAML value n.
func (p *parser) templateProblem(n *yaml.Node, path string, err error) {
	msg := err.Error()
	m := templateErrRE.FindStringSubmatch(msg)
	if m == nil {
		p.Report(n, path, strings.TrimPrefix(msg, "template: "), templateFix)
		return
	}
	tl, _ := strconv.Atoi(m[1])
	tc, _ := strconv.Atoi(m[2])
	line, col := n.Line+tl-1, n.Column+tc
	if n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
		line = n.Line + tl
		col = p.indent(line) + tc + 1
		if tc == 0 {
			col = p.indent(line) + 1
		}
	} else if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		col++
	}
	if tc == 0 && n.Style != yaml.LiteralStyle && n.Style != yaml.FoldedStyle {
		col = n.Column
	}
	msg = executingRE.ReplaceAllString(m[3], "at ")
	fix := templateFix
	if strings.Contains(msg, "type *alerts.MessageData") {
		fix = messageDataFix
	}
	p.ReportAt(line, col, path, msg, fix)
}

// indent returns the number of leading spaces of a 1-based line of the file.
func (p *parser) indent(line int) int {
	lines := bytes.SplitN(p.data, []byte("\n"), line+1)
	if line < 1 || line > len(lines) {
		return 0
	}
	l := lines[line-1]
	return len(l) - len(bytes.TrimLeft(l, " "))
}

func modeName(m markup.Mode) string {
	if m == markup.None {
		return "plain text"
	}
	return string(m)
}

// sampleAlerts are the alerts a template is tried on at load: one with
// every field, full of characters both parse modes reserve, one resolved
// and one with only a title.
func sampleAlerts() []Alert {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return []Alert{
		{Title: `Disk <90%> & "full" on db_1 [*] (x.y) #1 ~a~ |b| {c} =d+e-f! \`, Body: "line 1 <b>\nline 2 _*`>",
			Severity: SeverityCritical, Status: StatusFiring, Source: "sample_source", URL: "https://example.com/a_(b)?c=1&d=\"e\"",
			Labels: map[string]string{"team": "db_ops", "env": "prod-1"}, Fingerprint: "fp-1.2", Time: at},
		{Title: "Recovered", Severity: SeverityWarning, Status: StatusResolved, Time: at},
		{Title: "Only a title", Severity: SeverityInfo, Status: StatusFiring, Time: at},
	}
}
