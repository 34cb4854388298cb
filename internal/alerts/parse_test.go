package alerts

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/markup"
)

// mustParse parses a routing file given inline or fails the test.
func mustParse(t testing.TB, src string) *Table {
	t.Helper()
	tb, err := ParseRoutes("routes.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseRoutes: %v", err)
	}
	return tb
}

func TestParseRoutesTestdata(t *testing.T) {
	t.Parallel()
	tb, err := LoadRoutes("testdata/routes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tb.RouteNames(), []string{"db-oncall", "api-services", "github-info", "catch-all"}; !slices.Equal(got, want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	if got := tb.WebhookNames(); !slices.Equal(got, []string{"uptime"}) {
		t.Fatalf("webhooks %v", got)
	}
	if tb.Source() != "testdata/routes.yaml" {
		t.Errorf("Source() = %q", tb.Source())
	}
	db := tb.routes[0]
	if db.mode != markup.HTML || db.tmpl != nil || db.coalesce || db.queue != "" || db.silent != nil {
		t.Errorf("db-oncall settings %+v", db)
	}
	if want := []destination{{chat: "-1001000000001"}, {chat: "-1001000000002", thread: 7}}; !slices.Equal(db.destinations, want) {
		t.Errorf("db-oncall destinations %+v, want %+v", db.destinations, want)
	}
	api := tb.routes[1]
	if api.mode != markup.MarkdownV2 || len(api.match.sources) != 2 || api.match.labels[0].re == nil {
		t.Errorf("api-services %+v", api)
	}
	gh := tb.routes[2]
	if !gh.coalesce || gh.queue != "low" || gh.silent == nil || !*gh.silent || gh.tmpl == nil || gh.destinations[0].chat != "@herald_github" {
		t.Errorf("github-info %+v", gh)
	}
	if tb.fallback == nil || tb.fallback.name != "catch-all" || tb.fallback.mode != markup.None {
		t.Errorf("default route %+v", tb.fallback)
	}
}

// The example shipped for deployments must stay valid.
func TestDeployExampleParses(t *testing.T) {
	t.Parallel()
	path := "../../deploy/routes.example.yaml"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the deploy example is missing: %v", err)
	}
	if _, err := LoadRoutes(path); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRoutesMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := LoadRoutes("testdata/does-not-exist.yaml"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want one wrapping os.ErrNotExist", err)
	}
}

func TestParseRoutesDefaults(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
defaults:
  parse_mode: MarkdownV2
  queue: low
  coalesce: true
  disable_notification: false
  disable_link_preview: true
  template: "{{ .Title }}"
routes:
  - name: inherits
    destinations: [1]
  - name: overrides
    parse_mode: plain
    queue: critical
    coalesce: false
    disable_notification: true
    disable_link_preview: false
    template: "{{ upper .Title }}"
    destinations: [2]
`)
	in, over := tb.routes[0], tb.routes[1]
	if in.mode != markup.MarkdownV2 || in.queue != "low" || !in.coalesce || in.silent == nil || *in.silent || !in.noPreview || in.tmpl == nil {
		t.Errorf("inherited %+v", in)
	}
	if over.mode != markup.None || over.queue != "critical" || over.coalesce || !*over.silent || over.noPreview || over.tmpl == nil {
		t.Errorf("overridden %+v", over)
	}
}

func TestParseRoutesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		// want are substrings of the error, each usually
		// "file:line:col: path: what; fix".
		want []string
	}{
		{"empty file", "", []string{"routes.yaml:1:1: the file is empty; add a routes: list"}},
		{"only a comment", "# nothing\n", []string{"routes.yaml:1:1: the file is empty; add a routes: list"}},
		{"YAML syntax", "routes:\n  - name: [a\n", []string{"routes.yaml:3:1: invalid YAML: did not find expected ',' or ']'", "; check the indentation"}},
		{"not a mapping", "- a\n- b\n", []string{"routes.yaml:1:1: the document is a list, expected a mapping; write key: value pairs", "(keys: defaults, routes, webhooks, schedules, escalation_policies)"}},
		{"no routes key", "defaults: {}\n", []string{"routes.yaml:1:1: routes: is missing; add a routes: list"}},
		{"empty routes", "routes: []\n", []string{"routes.yaml:1:9: routes: is empty; add at least one route"}},
		{"routes not a list", "routes: {a: 1}\n", []string{"routes.yaml:1:9: routes: got a mapping, expected a list; write one item per line"}},
		{"unknown top-level key", "route: []\n", []string{`routes.yaml:1:1: route: unknown key; did you mean "routes"?`}},
		{"unknown route key with suggestion", "routes:\n  - name: a\n    destinatons: [1]\n", []string{
			`routes.yaml:3:5: routes[0].destinatons: unknown key; did you mean "destinations"?`,
			"routes.yaml:2:5: routes[0].destinations: is missing; add destinations:"}},
		{"unknown key in another case", "routes:\n  - Name: a\n    destinations: [1]\n", []string{`routes.yaml:2:5: routes[0].Name: unknown key; did you mean "name"?`}},
		{"unknown match key", "routes:\n  - name: a\n    match: {sevrity: info, color: red}\n    destinations: [1]\n", []string{
			`routes.yaml:3:13: routes[0].match.sevrity: unknown key; did you mean "severity"?`,
			`routes.yaml:3:28: routes[0].match.color: unknown key; use one of source, severity, labels`}},
		{"duplicate key", "routes:\n  - name: a\n    name: b\n    destinations: [1]\n", []string{
			`routes.yaml:3:5: routes[0].name: the key is written twice (first at line 2); keep one`}},
		{"missing name", "routes:\n  - destinations: [1]\n", []string{"routes.yaml:2:5: routes[0].name: is missing; add name:"}},
		{"bad name", "routes:\n  - name: 'a b'\n    destinations: [1]\n", []string{
			`routes.yaml:2:11: routes[0].name: "a b" is not a valid route name; use 1 to 64 letters`}},
		{"duplicate route names", "routes:\n  - name: a\n    destinations: [1]\n  - name: a\n    destinations: [2]\n", []string{
			`routes.yaml:4:5: routes[1].name: "a" is already the name of the route at line 2; give each route its own name`}},
		{"bad chat id", "routes:\n  - name: a\n    destinations:\n      - chat: abc\n", []string{
			`routes.yaml:4:15: routes[0].destinations[0].chat: "abc" is neither a numeric chat id nor an @username; use a numeric chat id`}},
		{"bad username", "routes:\n  - name: a\n    destinations: ['@ab']\n", []string{
			`routes.yaml:3:20: routes[0].destinations[0]: "@ab" is not a valid @username`, "; use a numeric chat id"}},
		{"chat missing", "routes:\n  - name: a\n    destinations:\n      - thread: 3\n", []string{
			"routes.yaml:4:9: routes[0].destinations[0].chat: is missing; add chat: with a numeric chat id"}},
		{"bad thread", "routes:\n  - name: a\n    destinations:\n      - {chat: 1, thread: -3}\n", []string{
			`routes.yaml:4:27: routes[0].destinations[0].thread: -3 is not a forum topic id; use the topic's id`}},
		{"thread not a number", "routes:\n  - name: a\n    destinations:\n      - {chat: 1, thread: general}\n", []string{
			`routes.yaml:4:27: routes[0].destinations[0].thread: got "general", expected a whole number; write digits only`}},
		{"duplicate destination", "routes:\n  - name: a\n    destinations: [1, '1']\n", []string{
			"routes.yaml:3:23: routes[0].destinations[1]: destination 1 is listed twice (first at line 3); keep one"}},
		{"empty destinations", "routes:\n  - name: a\n    destinations: []\n", []string{`routes.yaml:3:19: routes[0].destinations: is empty; add at least one chat`}},
		{"bad regex", "routes:\n  - name: a\n    match:\n      labels: {service: '=~api-(.*'}\n    destinations: [1]\n", []string{
			`routes.yaml:4:25: routes[0].match.labels.service: bad regular expression "api-(.*": missing closing )`, "; use Go RE2 syntax"}},
		{"bad source regex", "routes:\n  - name: a\n    match: {source: ['ok', '=~[z-a]']}\n    destinations: [1]\n", []string{
			`routes.yaml:3:28: routes[0].match.source: bad regular expression "[z-a]"`}},
		{"unknown severity", "routes:\n  - name: a\n    match: {severity: [critical, high]}\n    destinations: [1]\n", []string{
			`routes.yaml:3:34: routes[0].match.severity: "high" is not a known severity; use critical, warning or info`}},
		{"labels not a mapping", "routes:\n  - name: a\n    match: {labels: [a]}\n    destinations: [1]\n", []string{
			"routes.yaml:3:21: routes[0].match.labels: got a list, expected a mapping; write key: value pairs"}},
		{"label written twice", "routes:\n  - name: a\n    match:\n      labels:\n        team: a\n        team: b\n    destinations: [1]\n", []string{
			"routes.yaml:6:9: routes[0].match.labels.team: the key is written twice (first at line 5); keep one"}},
		{"unknown parse mode", "routes:\n  - name: a\n    parse_mode: Markdown\n    destinations: [1]\n", []string{
			`routes.yaml:3:17: routes[0].parse_mode: "Markdown" is not a supported parse mode; use HTML, MarkdownV2 or plain`}},
		{"unknown parse mode in defaults", "defaults: {parse_mode: rtf}\nroutes:\n  - name: a\n    destinations: [1]\n", []string{
			`routes.yaml:1:24: defaults.parse_mode: "rtf" is not a supported parse mode`}},
		{"unknown queue", "routes:\n  - name: a\n    queue: urgent\n    destinations: [1]\n", []string{
			`routes.yaml:3:12: routes[0].queue: "urgent" is not a known queue; use critical, default or low`}},
		{"not a bool", "routes:\n  - name: a\n    coalesce: yes\n    destinations: [1]\n", []string{
			`routes.yaml:3:15: routes[0].coalesce: got "yes", expected true or false; write true or false`}},
		{"template parse error", "routes:\n  - name: a\n    template: |\n      {{ .Emoji }}\n      {{ lnk .Title }}\n    destinations: [1]\n", []string{
			`routes.yaml:5:7: routes[0].template: function "lnk" not defined; see the template syntax and helpers in docs/ROUTING.md`}},
		{"template unknown field", "routes:\n  - name: a\n    template: '{{ .Tittle }}'\n    destinations: [1]\n", []string{
			`routes.yaml:3:`, `routes[0].template: `, `can't evaluate field Tittle`, "; a message template knows .Title"}},
		{"template invalid MarkdownV2", "routes:\n  - name: a\n    parse_mode: MarkdownV2\n    template: '{{ .Title }} (resolved)'\n    destinations: [1]\n", []string{
			`routes.yaml:4:15: routes[0].template: renders invalid MarkdownV2 for a sample firing alert`, `; write literal text through {{ text`}},
		{"template invalid HTML", "routes:\n  - name: a\n    template: '<b>{{ .Title }}'\n    destinations: [1]\n", []string{
			`routes.yaml:3:15: routes[0].template: renders invalid HTML`}},
		{"template renders nothing", "routes:\n  - name: a\n    template: '{{ if not .Title }}x{{ end }}'\n    destinations: [1]\n", []string{
			`routes.yaml:3:15: routes[0].template: renders an empty message`, "; make it print something"}},
		{"two default routes", "routes:\n  - name: a\n    default: true\n    destinations: [1]\n  - name: b\n    default: true\n    destinations: [1]\n", []string{
			"routes.yaml:5:5: routes[1].default: a second default route (the first is at line 2); keep one default route"}},
		{"default route with match", "routes:\n  - name: a\n    default: true\n    match: {source: x}\n    destinations: [1]\n", []string{
			`routes.yaml:4:5: routes[0].match: the default route takes no match`, "; remove match: or default: true"}},
		{"alias", "x: &d [1]\nroutes:\n  - name: a\n    destinations: *d\n", []string{
			`routes.yaml:1:1: x: unknown key; use one of defaults, routes, webhooks`,
			"routes.yaml:4:19: routes[0].destinations: uses the YAML alias *d, and aliases are not supported; write the value out in full"}},
		{"merge key", "routes:\n  - name: a\n    <<: {queue: low}\n    destinations: [1]\n", []string{
			`routes.yaml:3:5: routes[0].<<: unknown key; use one of name, default`}},
		{"second document", "routes:\n  - name: a\n    destinations: [1]\n---\nroutes: []\n", []string{
			"routes.yaml:4:1: a second YAML document starts here; remove the '---' separator"}},
		{"webhook without title and name", "routes:\n  - name: a\n    destinations: [1]\nwebhooks:\n  - body: x\n", []string{
			"routes.yaml:5:5: webhooks[0].name: is missing; add name:"}},
		{"webhook errors", "routes:\n  - name: a\n    destinations: [1]\nwebhooks:\n  - name: w\n    body: '{{ .x'\n    labels: {'bad key': x}\n  - name: w\n    title: t\n", []string{
			`routes.yaml:5:5: webhooks[0].title: is missing; add a title: template`,
			`routes.yaml:6:11: webhooks[0].body: unclosed action; see the template syntax`,
			`routes.yaml:7:14: webhooks[0].labels.bad key: "bad key" is not a valid label name; use letters, digits`,
			`routes.yaml:8:5: webhooks[1].name: "w" is already the name of the webhook at line 5; give each webhook its own name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb, err := ParseRoutes("routes.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("accepted; routes %v", tb.RouteNames())
			}
			if tb != nil {
				t.Errorf("a table returned with the error")
			}
			var re *routesError
			if !errors.As(err, &re) || re.File != "routes.yaml" || len(re.Problems) == 0 {
				t.Fatalf("error %T %v, want a *RoutesError", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// Every problem of a file is reported at once, in file order.
func TestParseRoutesReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := ParseRoutes("r.yaml", []byte("routes:\n  - name: a\n    queue: x\n    destinations: [abc]\n  - name: b\n    parse_mode: y\n"))
	var re *routesError
	if !errors.As(err, &re) {
		t.Fatal(err)
	}
	var lines []int
	for _, p := range re.Problems {
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, []int{3, 4, 5, 6}) {
		t.Fatalf("problems at lines %v, want 3, 4, 5, 6:\n%v", lines, err)
	}
	if n := strings.Count(err.Error(), "\n"); n != 3 {
		t.Errorf("want one line per problem:\n%v", err)
	}
}

func TestParseRoutesAcceptsShapes(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
routes:
  - name: scalars
    match:
      source: api
      severity: critical
      labels: {n: 3}
    destinations:
      - -1001234567890
      - "@some_channel"
      - {chat: 7, thread: 2}
  - name: only-default
    default: true
    destinations: [8]
`)
	r := tb.routes[0]
	if len(r.match.sources) != 1 || r.match.severities[0] != SeverityCritical || r.match.labels[0].exact != "3" {
		t.Errorf("matcher %+v", r.match)
	}
	want := []destination{{chat: "-1001234567890"}, {chat: "@some_channel"}, {chat: "7", thread: 2}}
	if !slices.Equal(r.destinations, want) {
		t.Errorf("destinations %+v, want %+v", r.destinations, want)
	}
	// A file with only a default route is complete: it sends everything there.
	only := mustParse(t, "routes:\n  - name: all\n    default: true\n    destinations: [1]\n")
	if len(only.routes) != 0 || only.fallback == nil {
		t.Errorf("default-only table %+v", only)
	}
}

// A mistake in defaults is reported once, though every route inherits it.
func TestParseRoutesDefaultsTemplateErrorOnce(t *testing.T) {
	t.Parallel()
	_, err := ParseRoutes("r.yaml", []byte("defaults:\n  template: '{{ .Nope }}'\nroutes:\n  - name: a\n    destinations: [1]\n  - name: b\n    destinations: [2]\n"))
	var re *routesError
	if !errors.As(err, &re) || len(re.Problems) != 1 || re.Problems[0].Line != 2 {
		t.Fatalf("want one problem at line 2, got %v", err)
	}
}
