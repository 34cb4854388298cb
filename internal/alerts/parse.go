package alerts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// The keys a routing file may use, per mapping.
var (
	topKeys         = []string{"defaults", "routes", "webhooks"}
	defaultsKeys    = []string{"parse_mode", "template", "queue", "coalesce", "disable_notification", "disable_link_preview"}
	routeKeys       = []string{"name", "default", "match", "destinations", "parse_mode", "template", "queue", "coalesce", "disable_notification", "disable_link_preview"}
	matchKeys       = []string{"source", "severity", "labels"}
	destinationKeys = []string{"chat", "thread"}
	webhookKeys     = []string{"name", "title", "body", "url", "severity", "status", "source", "fingerprint", "labels"}
)

// Limits on a routing file, far above any real one.
const (
	maxRoutes       = 1000
	maxDestinations = 100
	maxProblems     = 50
)

// namePattern is the syntax of route and webhook names: they appear in
// idempotency keys, logs and webhook URLs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// regexPrefix marks a matcher value as a regular expression.
const regexPrefix = "=~"

// ParseRoutes parses and validates a routing file; name is used in error
// messages (normally the file's path). Every problem found is reported in
// one *RoutesError, each with its line and column and the fix.
//
// The file has three top-level keys:
//
//	defaults:            # optional, applies to every route that does not say otherwise
//	  parse_mode: HTML   # HTML (default), MarkdownV2 or plain
//	  template: ...      # message template; default: the built-in one of the parse mode
//	  queue: ""          # critical, default or low; default: critical for critical alerts, else default
//	  coalesce: false    # let the digest fold this route's messages together
//	  disable_notification: ...  # default: silent for info alerts only
//	  disable_link_preview: false
//	routes:              # at least one
//	  - name: db-pager   # required, unique: letters, digits, _ . -
//	    match:           # all conditions must hold; no match: every alert
//	      source: alertmanager            # one value or a list
//	      severity: [critical, warning]   # one value or a list
//	      labels: {team: db, service: "=~api-.*"}  # exact, or "=~" and an anchored regexp
//	    destinations:    # required
//	      - chat: "-1001234567890"
//	        thread: 42   # optional forum topic
//	    # and any key of defaults, to override it for this route
//	  - name: everything-else
//	    default: true    # receives the alerts no other route matched; takes no match
//	    destinations: [{chat: "@ops_alerts"}]
//	webhooks:            # optional: generic JSON webhooks
//	  - name: uptime
//	    title: "{{ .monitor.name }} is {{ .status }}"  # required; Go templates over the JSON body
//	    body, url, severity, source, fingerprint: ...   # optional
//	    labels: {env: "{{ .env }}"}
//
// See docs/ROUTING.md for the matching rules and the template helpers.
func ParseRoutes(name string, data []byte) (*Table, error) {
	t, _, err := parseRoutes(name, data)
	return t, err
}

// parseRoutes is ParseRoutes that also returns the document's root node.
func parseRoutes(name string, data []byte) (*Table, *yaml.Node, error) {
	p := &parser{file: name, data: data}
	root := p.document()
	if root == nil {
		return nil, nil, p.err()
	}
	t := p.table(root)
	if err := p.err(); err != nil {
		return nil, root, err
	}
	return t, root, nil
}

// parser walks a routing file's node tree, collecting problems.
type parser struct {
	file     string
	data     []byte
	problems []Problem
}

func (p *parser) err() error {
	if len(p.problems) == 0 {
		return nil
	}
	sort.SliceStable(p.problems, func(i, j int) bool {
		a, b := p.problems[i], p.problems[j]
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	// A bad defaults template is found once per route: report it once.
	p.problems = slices.Compact(p.problems)
	if len(p.problems) > maxProblems {
		p.problems = append(p.problems[:maxProblems], Problem{Message: fmt.Sprintf("and %d more problems", len(p.problems)-maxProblems)})
	}
	return &RoutesError{File: p.file, Problems: p.problems}
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, Problem{Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, args...)})
}

// yamlLineRE finds the position in a YAML syntax error message.
var yamlLineRE = regexp.MustCompile(`line (\d+)(?:, column (\d+))?`)

// document parses the YAML text and returns the root mapping, or nil.
func (p *parser) document() *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(p.data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		p.problems = append(p.problems, Problem{Line: 1, Column: 1, Message: "the routing file is empty: add a routes: list"})
		return nil
	}
	if err != nil {
		p.syntaxError(err)
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			p.syntaxError(err)
		} else {
			p.errorf(&next, "a second YAML document: a routing file holds one document; remove the '---' separator")
		}
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		p.errorf(&doc, "the routing file must be a mapping with a routes: list")
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		p.errorf(root, "the routing file is empty: add a routes: list")
		return nil
	}
	return root
}

func (p *parser) syntaxError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pr := Problem{Message: "invalid YAML: " + msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		pr.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			pr.Column, _ = strconv.Atoi(m[2])
		}
	}
	p.problems = append(p.problems, pr)
}

// field is one key of a mapping with its value.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// mapping checks that n is a mapping whose keys are all in allowed (each
// at most once) and returns its entries by key.
func (p *parser) mapping(n *yaml.Node, what string, allowed []string) map[string]field {
	if !p.notAlias(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping of %s", what, strings.Join(allowed, ", "))
		return nil
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%s has a key that is not a plain name; use one of %s", what, strings.Join(allowed, ", "))
			continue
		}
		if !slices.Contains(allowed, k.Value) {
			p.errorf(k, "unknown key %q in %s: %s", k.Value, what, suggest(k.Value, allowed))
			continue
		}
		if prev, dup := out[k.Value]; dup {
			p.errorf(k, "key %q appears twice in %s (first at line %d): keep one", k.Value, what, prev.key.Line)
			continue
		}
		out[k.Value] = field{key: k, value: v}
	}
	return out
}

// notAlias refuses YAML aliases: they would let a small file expand into a
// huge table.
func (p *parser) notAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		p.errorf(n, "YAML aliases (*%s) are not supported in a routing file: write the value out", n.Value)
		return false
	}
	return true
}

// suggest names the closest allowed key, or lists them all.
func suggest(got string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(got), a); d < bestD {
			best, bestD = a, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "use one of " + strings.Join(allowed, ", ")
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns n's text when n is a scalar (not a mapping or list).
func (p *parser) scalar(n *yaml.Node, what string) (string, bool) {
	if !p.notAlias(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s must be a single value, not a %s", what, kindName(n))
		return "", false
	}
	if n.Tag == "!!null" {
		return "", true
	}
	return n.Value, true
}

// str is scalar for a value that must be text.
func (p *parser) str(n *yaml.Node, what string) (string, bool) {
	s, ok := p.scalar(n, what)
	if ok && n.Tag != "!!str" && n.Tag != "!!null" && n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!bool" {
		p.errorf(n, "%s must be text; quote it", what)
		return "", false
	}
	return s, ok
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, bool) {
	if _, ok := p.scalar(n, what); !ok {
		return false, false
	}
	if n.Tag != "!!bool" {
		p.errorf(n, "%s must be true or false, got %q", what, n.Value)
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	if err != nil {
		p.errorf(n, "%s must be true or false, got %q", what, n.Value)
		return false, false
	}
	return b, true
}

// list returns the items of a sequence, or n itself when it is a single
// value and one is allowed.
func (p *parser) list(n *yaml.Node, what string, single bool) []*yaml.Node {
	if !p.notAlias(n) {
		return nil
	}
	switch {
	case n.Kind == yaml.SequenceNode:
		return n.Content
	case single && n.Kind == yaml.ScalarNode:
		return []*yaml.Node{n}
	case single:
		p.errorf(n, "%s must be one value or a list of values", what)
	default:
		p.errorf(n, "%s must be a list (each item starting with '- ')", what)
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// options are the settings a route inherits from defaults.
type options struct {
	mode      markup.Mode
	tmplSrc   string
	tmplNode  *yaml.Node
	queue     string
	coalesce  bool
	silent    *bool
	noPreview bool
}

func (p *parser) table(root *yaml.Node) *Table {
	top := p.mapping(root, "the routing file", topKeys)
	if top == nil {
		return nil
	}
	def := options{mode: markup.HTML}
	if f, ok := top["defaults"]; ok {
		p.options(f.value, "defaults", &def, defaultsKeys)
	}
	t := &Table{source: p.file, webhooks: map[string]*GenericWebhook{}}
	f, ok := top["routes"]
	if !ok {
		p.errorf(root, "the routing file has no routes: add a routes: list with at least one route")
	} else {
		items := p.list(f.value, "routes", false)
		if f.value.Kind == yaml.SequenceNode && len(items) == 0 {
			p.errorf(f.value, "routes is empty: add at least one route (a route with default: true catches every alert)")
		}
		if len(items) > maxRoutes {
			p.errorf(f.value, "routes has %d entries; the limit is %d", len(items), maxRoutes)
			items = items[:maxRoutes]
		}
		seen := map[string]*yaml.Node{}
		var defaultNode *yaml.Node
		for i, n := range items {
			r := p.route(n, i, def)
			if r == nil {
				continue
			}
			if prev, dup := seen[r.name]; dup {
				p.errorf(n, "route name %q is already used at line %d: route names must be unique", r.name, prev.Line)
				continue
			}
			seen[r.name] = n
			if r.isDefault {
				if defaultNode != nil {
					p.errorf(n, "a second default route (the first is at line %d): keep one and give it several destinations", defaultNode.Line)
					continue
				}
				defaultNode, t.fallback = n, r
				continue
			}
			t.routes = append(t.routes, r)
		}
	}
	if f, ok := top["webhooks"]; ok {
		for _, n := range p.list(f.value, "webhooks", false) {
			g := p.webhook(n)
			if g == nil {
				continue
			}
			if prev, dup := t.webhooks[g.name]; dup {
				p.errorf(n, "webhook name %q is already used at line %d: webhook names must be unique", g.name, prev.line)
				continue
			}
			t.webhooks[g.name] = g
		}
	}
	return t
}

// options reads the keys shared by defaults and routes into o.
func (p *parser) options(n *yaml.Node, what string, o *options, allowed []string) map[string]field {
	m := p.mapping(n, what, allowed)
	if m == nil {
		return nil
	}
	if f, ok := m["parse_mode"]; ok {
		if s, ok := p.str(f.value, "parse_mode"); ok {
			mode, err := markup.ParseMode(s)
			if err != nil || strings.TrimSpace(s) == "" {
				p.errorf(f.value, "parse_mode %q is not supported: use HTML, MarkdownV2 or plain", s)
			} else {
				o.mode = mode
			}
		}
	}
	if f, ok := m["template"]; ok {
		if s, ok := p.str(f.value, "template"); ok {
			// An empty template selects the built-in one again.
			o.tmplSrc, o.tmplNode = s, f.value
			if strings.TrimSpace(s) == "" {
				o.tmplNode = nil
			}
		}
	}
	if f, ok := m["queue"]; ok {
		if s, ok := p.str(f.value, "queue"); ok {
			switch s {
			case jobs.QueueCritical, jobs.QueueDefault, jobs.QueueLow:
				o.queue = s
			default:
				p.errorf(f.value, "queue %q is not known: use critical, default or low (or leave it out: critical alerts then go to critical, the rest to default)", s)
			}
		}
	}
	if f, ok := m["coalesce"]; ok {
		if b, ok := p.boolean(f.value, "coalesce"); ok {
			o.coalesce = b
		}
	}
	if f, ok := m["disable_notification"]; ok {
		if b, ok := p.boolean(f.value, "disable_notification"); ok {
			o.silent = &b
		}
	}
	if f, ok := m["disable_link_preview"]; ok {
		if b, ok := p.boolean(f.value, "disable_link_preview"); ok {
			o.noPreview = b
		}
	}
	return m
}

func (p *parser) route(n *yaml.Node, i int, def options) *route {
	o := def
	what := fmt.Sprintf("routes[%d]", i)
	m := p.options(n, what, &o, routeKeys)
	if m == nil {
		return nil
	}
	r := &route{}
	named := false
	if f, ok := m["name"]; !ok {
		p.errorf(n, "%s has no name: add name: with letters, digits, _ . or -", what)
	} else if s, ok := p.str(f.value, "name"); ok {
		if !namePattern.MatchString(s) {
			p.errorf(f.value, "route name %q is not valid: use 1 to 64 letters, digits, _ . or -, starting with a letter or digit", s)
		} else {
			named = true
		}
		r.name = s
		what = fmt.Sprintf("route %q", s)
	}
	if f, ok := m["default"]; ok {
		r.isDefault, _ = p.boolean(f.value, "default")
	}
	if f, ok := m["match"]; ok {
		if r.isDefault {
			p.errorf(f.key, "%s is the default route and takes no match: it receives the alerts no other route matched; remove match: or default: true", what)
		} else {
			r.match = p.matcher(f.value, what)
		}
	}
	if f, ok := m["destinations"]; !ok {
		p.errorf(n, "%s has no destinations: add destinations: with at least one chat", what)
	} else {
		r.destinations = p.destinations(f.value, what)
	}
	r.mode, r.queue, r.coalesce, r.silent, r.noPreview = o.mode, o.queue, o.coalesce, o.silent, o.noPreview
	if o.tmplNode != nil {
		r.tmpl = p.template(o.tmplNode, o.tmplSrc, r.name, o.mode)
	}
	if !named {
		// Reported above; checking its name against others would only add noise.
		return nil
	}
	return r
}

func (p *parser) matcher(n *yaml.Node, what string) matcher {
	var mt matcher
	m := p.mapping(n, "match of "+what, matchKeys)
	if f, ok := m["source"]; ok {
		for _, v := range p.list(f.value, "match.source", true) {
			if s, ok := p.str(v, "match.source"); ok {
				if vm, ok := p.valueMatcher(v, s); ok {
					mt.sources = append(mt.sources, vm)
				}
			}
		}
	}
	if f, ok := m["severity"]; ok {
		for _, v := range p.list(f.value, "match.severity", true) {
			s, ok := p.str(v, "match.severity")
			if !ok {
				continue
			}
			switch sv := Severity(strings.ToLower(strings.TrimSpace(s))); sv {
			case SeverityCritical, SeverityWarning, SeverityInfo:
				mt.severities = append(mt.severities, sv)
			default:
				p.errorf(v, "severity %q is not known: use critical, warning or info (or a list of them)", s)
			}
		}
	}
	if f, ok := m["labels"]; ok {
		if !p.notAlias(f.value) {
			return mt
		}
		if f.value.Kind != yaml.MappingNode {
			p.errorf(f.value, "match.labels must be a mapping of label name to value, e.g. labels: {team: db}")
			return mt
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(f.value.Content); i += 2 {
			k, v := f.value.Content[i], f.value.Content[i+1]
			name, ok := p.str(k, "a label name")
			if !ok {
				continue
			}
			if name == "" {
				p.errorf(k, "a label name must not be empty")
				continue
			}
			if seen[name] {
				p.errorf(k, "label %q appears twice in match.labels: keep one", name)
				continue
			}
			seen[name] = true
			s, ok := p.str(v, "label "+name)
			if !ok {
				continue
			}
			if vm, ok := p.valueMatcher(v, s); ok {
				mt.labels = append(mt.labels, labelMatcher{name: name, valueMatcher: vm})
			}
		}
	}
	return mt
}

// valueMatcher compiles "=~regexp" values (anchored at both ends).
func (p *parser) valueMatcher(n *yaml.Node, s string) (valueMatcher, bool) {
	if !strings.HasPrefix(s, regexPrefix) {
		return valueMatcher{exact: s}, true
	}
	expr := strings.TrimPrefix(s, regexPrefix)
	if _, err := regexp.Compile(expr); err != nil {
		p.errorf(n, "bad regular expression %q: %s (Go RE2 syntax; the value after =~ must match the whole text)",
			expr, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return valueMatcher{}, false
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		p.errorf(n, "bad regular expression %q: %s", expr, err)
		return valueMatcher{}, false
	}
	return valueMatcher{re: re}, true
}

func (p *parser) destinations(n *yaml.Node, what string) []destination {
	items := p.list(n, "destinations", false)
	if n.Kind == yaml.SequenceNode && len(items) == 0 {
		p.errorf(n, "%s has an empty destinations list: add at least one chat", what)
	}
	if len(items) > maxDestinations {
		p.errorf(n, "%s has %d destinations; the limit is %d", what, len(items), maxDestinations)
		items = items[:maxDestinations]
	}
	var out []destination
	seen := map[destination]int{}
	for _, item := range items {
		var d destination
		chatNode := item
		if item.Kind == yaml.ScalarNode {
			// Shorthand: a bare chat id.
		} else {
			m := p.mapping(item, "a destination", destinationKeys)
			if m == nil {
				continue
			}
			f, ok := m["chat"]
			if !ok {
				p.errorf(item, "a destination needs chat: a numeric chat id such as \"-1001234567890\" or an @channel username")
				continue
			}
			chatNode = f.value
			if f, ok := m["thread"]; ok {
				if _, ok := p.scalar(f.value, "thread"); ok {
					id, err := strconv.Atoi(f.value.Value)
					if f.value.Tag != "!!int" || err != nil || id <= 0 {
						p.errorf(f.value, "thread must be a forum topic id (a positive whole number), got %q", f.value.Value)
					} else {
						d.thread = id
					}
				}
			}
		}
		s, ok := p.str(chatNode, "chat")
		if !ok {
			continue
		}
		chat, err := jobs.ValidateChat(s)
		if err != nil {
			p.errorf(chatNode, "chat %s", err)
			continue
		}
		d.chat = chat
		if line, dup := seen[d]; dup {
			p.errorf(item, "destination %s is listed twice in %s (first at line %d): keep one", d.key(), what, line)
			continue
		}
		seen[d] = item.Line
		out = append(out, d)
	}
	return out
}

// templateErrRE takes a text/template error apart: template name, line,
// optional column, message.
var templateErrRE = regexp.MustCompile(`^template: [^:]*:(\d+)(?::(\d+))?: (?s:(.*))$`)

// templateProblem reports a template error at its position in the file.
func (p *parser) templateProblem(n *yaml.Node, field string, err error) {
	msg := err.Error()
	m := templateErrRE.FindStringSubmatch(msg)
	if m == nil {
		p.errorf(n, "%s: %s", field, strings.TrimPrefix(msg, "template: "))
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
	if strings.Contains(msg, "type *alerts.MessageData") {
		msg += " (a message template knows .Title .Body .Severity .Status .Source .URL .Fingerprint .Time .Route .Emoji .Resolved .Labels and .Label \"name\")"
	}
	p.problems = append(p.problems, Problem{Line: line, Column: col, Message: field + ": " + msg})
}

// executingRE finds the template name in an execution error, which is the
// route's name and differs between routes sharing the defaults template.
var executingRE = regexp.MustCompile(`executing "[^"]*" at `)

// indent returns the number of leading spaces of a 1-based line of the file.
func (p *parser) indent(line int) int {
	lines := bytes.SplitN(p.data, []byte("\n"), line+1)
	if line < 1 || line > len(lines) {
		return 0
	}
	l := lines[line-1]
	return len(l) - len(bytes.TrimLeft(l, " "))
}

// template parses a route's message template and tries it on sample
// alerts: a template that fails for them (unknown field, wrong helper
// arguments, markup the parse mode rejects, an empty message for an alert
// with every field set) is a load error. In this trial raw escapes its
// argument like text: what raw inserts is the sender's business, checked
// (with a fallback) when a real alert is rendered.
func (p *parser) template(n *yaml.Node, src, name string, mode markup.Mode) *template.Template {
	// The template is named "template" rather than after the route: route
	// names may hold characters that would confuse the error positions.
	tmpl, err := newTemplate("template", mode).Parse(src)
	if err != nil {
		p.templateProblem(n, "template", err)
		return nil
	}
	trial, err := tmpl.Clone()
	if err != nil {
		p.templateProblem(n, "template", err)
		return nil
	}
	h := helpers{mode}
	trial.Funcs(template.FuncMap{"raw": h.text})
	for i, a := range sampleAlerts() {
		var buf cappedBuffer
		if err := trial.Execute(&buf, newMessageData(&a, name, mode, renderLimits{bodyRunes: -1})); err != nil {
			p.templateProblem(n, "template", err)
			return nil
		}
		text := strings.TrimSpace(buf.String())
		if err := markup.Validate(text, mode); err != nil {
			hint := "write literal text through {{ text \"...\" }} or escape it by hand"
			p.errorf(n, "template renders invalid %s for a sample %s alert (%s): %s", modeName(mode), a.Status, err, hint)
			return nil
		}
		if i == 0 && strings.TrimSpace(mustPlain(text, mode)) == "" {
			p.errorf(n, "template renders an empty message for an alert with every field set: Telegram refuses empty messages")
			return nil
		}
	}
	return tmpl
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
