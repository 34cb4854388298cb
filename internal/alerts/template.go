package alerts

import (
	"bytes"
	"errors"
	"fmt"
	neturl "net/url"
	"reflect"
	"sort"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/markup"
)

// Markup is text already formatted for a route's parse mode. The fields a
// message template sees are Markup (the alert's plain text escaped for the
// mode), and so are the results of the template helpers: the template
// prints them as they are, and a helper given Markup does not escape it a
// second time.
type Markup string

// Label is one alert label as a message template sees it, both parts
// escaped for the route's parse mode.
type Label struct {
	Name  Markup
	Value Markup
}

// MessageData is the value a route's message template executes on. Every
// text field holds the alert's text escaped for the route's parse mode, so
// {{ .Title }} is safe wherever text may stand.
type MessageData struct {
	Title       Markup
	Body        Markup
	Severity    Markup // critical, warning or info
	Status      Markup // firing or resolved
	Source      Markup
	URL         Markup // the URL escaped as text; use {{ link .Title .URL }} for a link
	Fingerprint Markup
	Time        Markup // RFC 3339, UTC
	Route       Markup // the route's name
	// Emoji is a marker for the severity (🚨 critical, ⚠️ warning, ℹ️ info)
	// or ✅ when the alert is resolved.
	Emoji Markup
	// Resolved is true when the alert's status is resolved.
	Resolved bool
	// Labels are the alert's labels sorted by name.
	Labels []Label

	labels map[string]Markup
}

// Label returns the value of the label called name, escaped, or "" when the
// alert has no such label: {{ .Label "team" }}.
func (d *MessageData) Label(name string) Markup { return d.labels[name] }

// severityEmoji marks a message with its severity at a glance.
func severityEmoji(a *Alert) string {
	if a.Status == StatusResolved {
		return "✅"
	}
	switch a.Severity {
	case SeverityCritical:
		return "🚨"
	case SeverityWarning:
		return "⚠️"
	default:
		return "ℹ️"
	}
}

// renderLimits shortens what a rendering shows so that it fits the text
// limit: the body is cut to bodyRunes (negative: whole) and labels are left
// out when noLabels is set.
type renderLimits struct {
	bodyRunes int
	noLabels  bool
}

// newMessageData escapes a's fields for mode.
func newMessageData(a *Alert, routeName string, mode markup.Mode, lim renderLimits) *MessageData {
	esc := func(s string) Markup { return Markup(markup.Escape(s, mode)) }
	body := a.Body
	if lim.bodyRunes >= 0 {
		body = markup.TruncateRunes(body, lim.bodyRunes)
	}
	d := &MessageData{
		Title:       esc(a.Title),
		Body:        bodyMarkup(a, body, mode),
		Severity:    esc(string(a.Severity)),
		Status:      esc(string(a.Status)),
		Source:      esc(a.Source),
		URL:         esc(a.URL),
		Fingerprint: esc(a.Fingerprint),
		Time:        esc(a.Time.UTC().Format("2006-01-02T15:04:05Z07:00")),
		Route:       esc(routeName),
		Emoji:       esc(severityEmoji(a)),
		Resolved:    a.Status == StatusResolved,
		labels:      make(map[string]Markup, len(a.Labels)),
	}
	if lim.noLabels {
		return d
	}
	names := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := esc(a.Labels[k])
		d.labels[k] = v
		d.Labels = append(d.Labels, Label{Name: esc(k), Value: v})
	}
	return d
}

// bodyMarkup is the body (cut to body) for mode: the sender's own
// formatting (BodyHTML) in HTML mode when the body is whole and it is
// valid, else body escaped.
func bodyMarkup(a *Alert, body string, mode markup.Mode) Markup {
	if a.BodyHTML != "" && mode == markup.HTML && len(body) == len(a.Body) && markup.Validate(a.BodyHTML, mode) == nil {
		return Markup(a.BodyHTML)
	}
	return Markup(markup.Escape(body, mode))
}

// helpers is the mode-aware function set of message templates. Every
// helper returns Markup. Arguments that are Markup count as formatted text
// of the mode; anything else (a string written in the template, a number)
// counts as plain text and is escaped.
type helpers struct{ mode markup.Mode }

// funcMap lists the helpers under their template names.
func (h helpers) funcMap() template.FuncMap {
	return template.FuncMap{
		"link":     h.link,
		"bold":     h.bold,
		"italic":   h.italic,
		"code":     h.code,
		"text":     h.text,
		"raw":      h.raw,
		"upper":    func(v any) Markup { return h.escape(strings.ToUpper(h.plain(v))) },
		"lower":    func(v any) Markup { return h.escape(strings.ToLower(h.plain(v))) },
		"truncate": func(n int, v any) Markup { return h.escape(markup.TruncateRunes(h.plain(v), n)) },
		"join":     h.join,
	}
}

func (h helpers) escape(s string) Markup { return Markup(markup.Escape(s, h.mode)) }

// plain returns the plain text of a helper argument: Markup is unescaped,
// anything else is printed as text.
func (h helpers) plain(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case Markup:
		if p, err := markup.Plain(string(x), h.mode); err == nil {
			return p
		}
		return string(x)
	case Label:
		return h.plain(x.Name) + "=" + h.plain(x.Value)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// markup returns a helper argument as formatted text of the mode.
func (h helpers) markup(v any) Markup {
	if m, ok := v.(Markup); ok {
		return m
	}
	return h.escape(h.plain(v))
}

// text escapes v: {{ text "(resolved)" }} writes literal text that would
// otherwise need escaping by hand in MarkdownV2.
func (h helpers) text(v any) Markup { return h.markup(v) }

// raw inserts v's plain text without escaping, for values that already hold
// markup of the mode (a body a sender formatted in HTML, say). An invalid
// result sends the built-in plain text message instead.
func (h helpers) raw(v any) Markup { return Markup(h.plain(v)) }

// link makes text a link to url; without a url it is just text. In plain
// text mode, and for a url that is not an absolute http, https, tg or
// mailto URL (Telegram would drop such a link silently), it writes
// "text (url)".
func (h helpers) link(text, url any) Markup {
	u := h.plain(url)
	t := h.markup(text)
	if t == "" {
		t = h.escape(u)
	}
	if u == "" {
		return t
	}
	mode := h.mode
	if !linkable(u) {
		mode = markup.None
	}
	switch mode {
	case markup.HTML:
		return Markup(`<a href="` + markup.EscapeHTML(u) + `">` + string(t) + `</a>`)
	case markup.MarkdownV2:
		return Markup("[" + string(t) + "](" + escapeMarkdownV2URL(u) + ")")
	default:
		if h.plain(t) == u {
			return t
		}
		return t + h.escape(" ("+u+")")
	}
}

// linkable reports whether Telegram takes u as a link target.
func linkable(u string) bool {
	p, err := neturl.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https", "tg":
		return p.Host != "" || p.Opaque != ""
	case "mailto":
		return p.Opaque != ""
	}
	return false
}

// escapeMarkdownV2URL escapes the two characters that end or escape
// something inside the (...) of a MarkdownV2 link: ')' and '\'.
func escapeMarkdownV2URL(s string) string {
	return strings.NewReplacer(`\`, `\\`, `)`, `\)`).Replace(s)
}

func (h helpers) wrap(v any, html, md string) Markup {
	m := h.markup(v)
	if m == "" {
		return ""
	}
	switch h.mode {
	case markup.HTML:
		return Markup("<" + html + ">" + string(m) + "</" + html + ">")
	case markup.MarkdownV2:
		return Markup(md + string(m) + md)
	}
	return m
}

// bold sets v in bold.
func (h helpers) bold(v any) Markup { return h.wrap(v, "b", "*") }

// italic sets v in italics.
func (h helpers) italic(v any) Markup { return h.wrap(v, "i", "_") }

// code sets v's plain text in monospace.
func (h helpers) code(v any) Markup {
	p := h.plain(v)
	if p == "" {
		return ""
	}
	switch h.mode {
	case markup.HTML:
		return Markup("<code>" + markup.EscapeHTML(p) + "</code>")
	case markup.MarkdownV2:
		return Markup("`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(p) + "`")
	}
	return Markup(p)
}

// join joins the plain text of list's elements (a slice of anything; a
// label reads name=value) with sep, and escapes the result.
func (h helpers) join(sep any, list any) (Markup, error) {
	v := reflect.ValueOf(list)
	if list == nil {
		return "", nil
	}
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = h.plain(v.Index(i).Interface())
	}
	return h.escape(strings.Join(parts, h.plain(sep))), nil
}

// Built-in message templates, one per parse mode: severity marker, the title
// in bold (linked when the alert has a URL), the body, then the labels.
const (
	builtinHTML = `{{ .Emoji }} <b>{{ link .Title .URL }}</b>{{ if .Resolved }} (resolved){{ end }}
{{- with .Body }}

{{ . }}{{ end }}
{{- with .Labels }}

{{ range $i, $l := . }}{{ if $i }}, {{ end }}{{ $l.Name }}=<code>{{ $l.Value }}</code>{{ end }}{{ end }}
{{- with .Source }}
<i>via {{ . }}</i>{{ end }}`

	builtinMarkdownV2 = `{{ .Emoji }} *{{ link .Title .URL }}*{{ if .Resolved }} \(resolved\){{ end }}
{{- with .Body }}

{{ . }}{{ end }}
{{- with .Labels }}

{{ range $i, $l := . }}{{ if $i }}, {{ end }}{{ $l.Name }}\={{ code $l.Value }}{{ end }}{{ end }}
{{- with .Source }}
_via {{ . }}_{{ end }}`

	builtinPlain = `{{ .Emoji }} {{ link .Title .URL }}{{ if .Resolved }} (resolved){{ end }}
{{- with .Body }}

{{ . }}{{ end }}
{{- with .Labels }}

{{ range $i, $l := . }}{{ if $i }}, {{ end }}{{ $l.Name }}={{ $l.Value }}{{ end }}{{ end }}
{{- with .Source }}
via {{ . }}{{ end }}`
)

// builtins holds the parsed built-in template of each mode.
var builtins = map[markup.Mode]*template.Template{
	markup.HTML:       mustTemplate("builtin-html", builtinHTML, markup.HTML),
	markup.MarkdownV2: mustTemplate("builtin-markdownv2", builtinMarkdownV2, markup.MarkdownV2),
	markup.None:       mustTemplate("builtin-plain", builtinPlain, markup.None),
}

func mustTemplate(name, src string, mode markup.Mode) *template.Template {
	return template.Must(newTemplate(name, mode).Parse(src))
}

// newTemplate returns an empty message template with the helpers of mode.
func newTemplate(name string, mode markup.Mode) *template.Template {
	return template.New(name).Option("missingkey=error").Funcs(helpers{mode}.funcMap())
}

// maxRenderBytes bounds what one template execution may write.
const maxRenderBytes = 1 << 20

var errRenderTooLarge = errors.New("template output exceeds 1 MiB")

// cappedBuffer is a bytes.Buffer that refuses to grow past maxRenderBytes.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxRenderBytes {
		return 0, errRenderTooLarge
	}
	return b.Buffer.Write(p)
}

// execute runs tmpl for a and checks the result: valid markup of mode,
// not empty, at most maxLen UTF-16 code units.
func execute(tmpl *template.Template, mode markup.Mode, a *Alert, routeName string, lim renderLimits, maxLen int) (string, error) {
	var buf cappedBuffer
	if err := tmpl.Execute(&buf, newMessageData(a, routeName, mode, lim)); err != nil {
		return "", err
	}
	text := strings.TrimSpace(buf.String())
	// Length first: it is cheap, and an oversized rendering is tried again
	// shorter anyway.
	if l := markup.UTF16Len(text); l > maxLen {
		return "", &tooLongError{n: l, max: maxLen}
	}
	plain, err := markup.Plain(text, mode) // validates the markup too
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(plain) == "" {
		return "", errEmptyRendering
	}
	return text, nil
}

var errEmptyRendering = errors.New("the template rendered an empty message")

type tooLongError struct{ n, max int }

func (e *tooLongError) Error() string {
	return fmt.Sprintf("rendered message is %d UTF-16 units long; the limit is %d", e.n, e.max)
}

func mustPlain(text string, mode markup.Mode) string {
	p, err := markup.Plain(text, mode)
	if err != nil {
		return ""
	}
	return p
}

// renderFitting executes tmpl, shortening what it shows until the message
// fits maxLen: first the body is halved (down to about a thousand
// characters), then the labels are left out and the body is halved again
// from its full length. It returns the first error that is not about
// length.
func renderFitting(tmpl *template.Template, mode markup.Mode, a *Alert, routeName string, maxLen int) (string, error) {
	full := utf8.RuneCountInString(a.Body)
	var err error
	for _, noLabels := range []bool{false, true} {
		if noLabels && len(a.Labels) == 0 {
			break
		}
		floor := 0
		if !noLabels {
			floor = keepBodyRunes
		}
		for n := full; ; n /= 2 {
			var text string
			text, err = execute(tmpl, mode, a, routeName, renderLimits{bodyRunes: n, noLabels: noLabels}, maxLen)
			var tl *tooLongError
			if !errors.As(err, &tl) {
				return text, err
			}
			if n <= floor || n == 0 {
				break
			}
		}
	}
	return "", err
}

// keepBodyRunes is how much of the body shortening keeps before it drops
// the labels instead.
const keepBodyRunes = 1024

// render produces the text and parse mode of a's message for route rt. A
// rendering that fails (template error, invalid markup, empty text) falls
// back to the built-in plain text template, which cannot fail; a message
// that still does not fit is reduced to its title.
func (r *Router) render(a *Alert, rt *route) (string, markup.Mode) {
	tmpl := rt.tmpl
	if tmpl == nil {
		tmpl = builtins[rt.mode]
	}
	text, err := renderFitting(tmpl, rt.mode, a, rt.name, r.cfg.MaxTextLen)
	if err == nil {
		return text, rt.mode
	}
	r.cfg.Logger.Warn("message template failed; sending the built-in plain text message instead",
		"route", rt.name, "parse_mode", string(rt.mode), "error", err)
	text, err = renderFitting(builtins[markup.None], markup.None, a, rt.name, r.cfg.MaxTextLen)
	if err == nil {
		return text, markup.None
	}
	return lastResort(a, r.cfg.MaxTextLen), markup.None
}

// lastResort is the alert's title, cut to fit maxLen UTF-16 units.
func lastResort(a *Alert, maxLen int) string {
	title := severityEmoji(a) + " " + a.Title
	for n := utf8.RuneCountInString(title); markup.UTF16Len(title) > maxLen && n > 1; {
		n /= 2
		title = markup.TruncateRunes(title, n)
	}
	return title
}
