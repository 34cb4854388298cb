package alerts

import (
	"errors"
	"slices"
	"strings"
	"testing"
	texttemplate "text/template"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/markup"
)

// FuzzParseRoutes feeds arbitrary text to the routing file parser. It must
// never panic; a file it refuses gets a *routesError with at least one
// problem; a file it accepts must still be accepted, with the same routes
// and webhooks, after its YAML tree is written out again, and every route
// must render the sample alerts into valid messages.
func FuzzParseRoutes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, root, err := parseRoutes("f.yaml", data, ParseOptions{})
		if err != nil {
			var re *routesError
			if !errors.As(err, &re) || len(re.Problems) == 0 {
				t.Fatalf("error %T %v, want a *RoutesError with problems", err, err)
			}
			if tb != nil {
				t.Fatal("a table returned with an error")
			}
			return
		}
		out, err := yaml.Marshal(root)
		if err != nil {
			t.Fatalf("cannot write the accepted tree out: %v", err)
		}
		tb2, err := ParseRoutes("f2.yaml", out)
		if err != nil {
			t.Fatalf("accepted\n%s\nbut not its re-encoding\n%s\n%v", data, out, err)
		}
		if !slices.Equal(tb.RouteNames(), tb2.RouteNames()) || !slices.Equal(tb.WebhookNames(), tb2.WebhookNames()) {
			t.Fatalf("re-encoding changed the table: %v %v vs %v %v", tb.RouteNames(), tb.WebhookNames(), tb2.RouteNames(), tb2.WebhookNames())
		}
		r := &Router{cfg: RouterConfig{Logger: quietLogger()}.WithDefaults()}
		routes := append([]*route(nil), tb.routes...)
		if tb.fallback != nil {
			routes = append(routes, tb.fallback)
		}
		for _, rt := range routes {
			if len(rt.destinations) == 0 {
				t.Fatalf("route %q accepted without destinations", rt.name)
			}
			for _, a := range sampleAlerts() {
				text, mode := r.render(&a, rt)
				checkRendering(t, text, mode, r.cfg.MaxTextLen)
			}
		}
	})
}

// fuzzTemplates are custom templates tried by FuzzRender beside the
// built-in ones: every helper, on every field.
var fuzzTemplates = map[markup.Mode]string{
	markup.HTML: `{{ .Emoji }} {{ bold (link .Title .URL) }} {{ italic .Source }} {{ code .Fingerprint }}
{{ truncate 50 .Body }} {{ upper .Title }} {{ lower .Body }} {{ join "; " .Labels }}
{{ range .Labels }}<b>{{ .Name }}</b>: {{ italic .Value }} {{ link .Value $.URL }}{{ end }} {{ text "a<b>&c" }}`,
	markup.MarkdownV2: `{{ .Emoji }} {{ bold (link .Title .URL) }} {{ italic .Source }} {{ code .Fingerprint }}
{{ truncate 50 .Body }} {{ upper .Title }} {{ lower .Body }} {{ join "; " .Labels }}
{{ range .Labels }}*{{ .Name }}*: {{ italic .Value }} {{ link .Value $.URL }} {{ end }}{{ text "(a_b*c)" }}`,
	markup.None: `{{ .Emoji }} {{ bold (link .Title .URL) }} {{ code .Fingerprint }} {{ truncate 50 .Body }} {{ join "; " .Labels }}`,
}

// FuzzRender renders arbitrary alert text in every parse mode. The built-in
// templates must always produce a valid message in the route's own mode
// that shows the title exactly; templates using every helper must produce
// valid markup (possibly through the plain text fallback), never an empty
// or oversized message.
func FuzzRender(f *testing.F) {
	f.Fuzz(func(t *testing.T, title, body, url, source, labelName, labelValue, fingerprint string) {
		a := Alert{Title: title, Body: body, URL: url, Source: source, Fingerprint: fingerprint, Severity: SeverityWarning}
		if labelName != "" {
			a.Labels = map[string]string{labelName: labelValue, "team": labelValue + "x"}
		}
		if a.Normalize(testNow) != nil {
			return
		}
		r := &Router{cfg: RouterConfig{Logger: quietLogger()}.WithDefaults()}
		for _, mode := range []markup.Mode{markup.HTML, markup.MarkdownV2, markup.None} {
			rt := &route{name: "fuzz", mode: mode, destinations: []destination{{chat: "1"}}}
			text, got := r.render(&a, rt)
			if got != mode {
				t.Fatalf("built-in %q template fell back to plain text for %+v:\n%s", mode, a, text)
			}
			checkRendering(t, text, got, r.cfg.MaxTextLen)
			plain, _ := markup.Plain(text, got)
			if !strings.Contains(plain, a.Title) {
				t.Fatalf("the %q message does not show the title %q:\n%s", mode, a.Title, plain)
			}
			rt.tmpl = fuzzTemplate(t, mode)
			text, got = r.render(&a, rt)
			checkRendering(t, text, got, r.cfg.MaxTextLen)
		}
	})
}

func fuzzTemplate(t *testing.T, mode markup.Mode) *texttemplate.Template {
	t.Helper()
	tmpl, err := newTemplate("fuzz", mode).Parse(fuzzTemplates[mode])
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func checkRendering(t *testing.T, text string, mode markup.Mode, maxLen int) {
	t.Helper()
	if err := markup.Validate(text, mode); err != nil {
		t.Fatalf("invalid %q message: %v\n%s", mode, err, text)
	}
	if strings.TrimSpace(text) == "" {
		t.Fatal("empty message")
	}
	if n := markup.UTF16Len(text); n > maxLen {
		t.Fatalf("message of %d UTF-16 units, over %d", n, maxLen)
	}
}
