package alerts

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// The keys a routing file may use, per mapping.
var (
	topKeys         = []string{"defaults", "routes", "webhooks", "schedules", "escalation_policies"}
	defaultsKeys    = []string{"bot", "parse_mode", "template", "queue", "coalesce", "disable_notification", "disable_link_preview", "on_resolve", "buttons", "allowed_users"}
	routeKeys       = []string{"name", "default", "match", "destinations", "bot", "parse_mode", "template", "queue", "coalesce", "disable_notification", "disable_link_preview", "quiet_hours", "on_resolve", "buttons", "allowed_users", "escalation", "alertmanager"}
	matchKeys       = []string{"source", "severity", "labels"}
	destinationKeys = []string{"chat", "thread"}
	webhookKeys     = []string{"name", "title", "body", "url", "severity", "status", "source", "fingerprint", "key", "image_url", "labels"}
)

// Limits on a routing file, far above any real one.
const (
	maxRoutes       = 1000
	maxDestinations = 100
)

// namePattern is the syntax of route and webhook names: they appear in
// idempotency keys, logs and webhook URLs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// nameFix is the fix for a route or webhook name namePattern refuses.
const nameFix = "use 1 to 64 letters, digits, _ . or -, starting with a letter or digit"

// regexPrefix marks a matcher value as a regular expression.
const regexPrefix = "=~"

// ParseRoutes parses and validates a routing file; name is used in error
// messages (normally the file's path). Every problem found is reported in
// one *routesError, each with its line and column and the fix.
//
// The file has these top-level keys:
//
//	defaults:            # optional, applies to every route that does not say otherwise
//	  bot: pages         # the bot that sends (one of HERALD_BOTS); default: the bot "default"
//	  parse_mode: HTML   # HTML (default), MarkdownV2 or plain
//	  template: ...      # message template; default: the built-in one of the parse mode
//	  queue: ""          # critical, default or low; default: critical for critical alerts, else default
//	  coalesce: false    # let the digest fold this route's messages together
//	  disable_notification: ...  # default: silent for info alerts only
//	  disable_link_preview: false
//	  on_resolve: reply  # reply, edit or new: how a resolved alert relates to its firing message
//	  buttons: [ack, silence_1h, silence_24h]  # keyboard under firing alerts; default none
//	  allowed_users: ["@alice", 12345]         # who may press; default anyone in the chat
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
//	    escalation: db-critical   # optional: the escalation policy of its firing alerts
//	webhooks:            # optional: generic JSON webhooks
//	  - name: uptime
//	    title: "{{ .monitor.name }} is {{ .status }}"  # required; Go templates over the JSON body
//	    body, url, severity, status, source, fingerprint, key, image_url: ...   # optional
//	    labels: {env: "{{ .env }}"}
//	schedules:           # optional: who is on call (see oncall.Parse)
//	escalation_policies: # optional: what routes' escalation: name (see escalation.Read)
//
// See docs/ROUTING.md for the matching rules and the template helpers.
//
// ParseRoutes accepts any well-formed bot name; ParseRoutesWith checks the
// bots against the ones a Herald serves.
func ParseRoutes(name string, data []byte) (*Table, error) {
	return ParseRoutesWith(name, data, ParseOptions{})
}

// ParseOptions are what a routing file is checked against besides its own
// rules.
type ParseOptions struct {
	// Bots are the bots routes may name (bot:). A route naming none sends
	// as keys.DefaultBot, which must then be listed. nil accepts any
	// well-formed name, and a route without a bot.
	Bots []string
}

// ParseRoutesWith is ParseRoutes checking the routes against opts: a route
// whose bot is not one of opts.Bots is a problem naming the route and the
// known bots.
func ParseRoutesWith(name string, data []byte, opts ParseOptions) (*Table, error) {
	t, _, err := parseRoutes(name, data, opts)
	return t, err
}

// parseRoutes is ParseRoutesWith that also returns the document's root
// node.
func parseRoutes(name string, data []byte, opts ParseOptions) (*Table, *yaml.Node, error) {
	p := &parser{file: name, data: data, bots: opts.Bots}
	root := p.Document(data, "add a routes: list with at least one route")
	if root == nil {
		return nil, nil, p.err()
	}
	t := p.table(root)
	if err := p.err(); err != nil {
		return nil, root, err
	}
	return t, root, nil
}

// parser reads a routing file's node tree into a Table. The strict walker
// it embeds checks the file's shape and collects every problem; the
// parser adds the checks only a routing file has (chats, regular
// expressions, templates, unique names).
type parser struct {
	yamlstrict.Walker
	file string
	data []byte
	// bots are the bots routes may name; nil: any well-formed name.
	bots []string
	// policies are the file's escalation policies, by name, for the
	// routes' escalation: to name.
	policies map[string]escalation.Policy
}

func (p *parser) err() error {
	if !p.Failed() {
		return nil
	}
	return &routesError{File: p.file, Problems: p.Problems()}
}

func (p *parser) table(root *yaml.Node) *Table {
	top := p.Mapping(root, "", topKeys)
	if top == nil {
		return nil
	}
	def := options{mode: markup.HTML}
	if f, ok := top["defaults"]; ok {
		if m := p.options(f, &def, defaultsKeys); m != nil {
			p.interaction(m, &def, "defaults")
		}
		if def.botNode != nil && !p.knownBot(def.bot) {
			p.Report(def.botNode, def.botPath, fmt.Sprintf("names the bot %q, which is not a bot of this Herald", def.bot), p.botFix())
		}
	}
	t := &Table{source: p.file, webhooks: map[string]*GenericWebhook{}, bot: def.bot}
	if t.bot == keys.DefaultBot {
		t.bot = ""
	}
	p.oncall(top, t)
	if f, ok := top["routes"]; ok {
		p.routes(f, def, t)
	} else {
		p.Report(root, "routes", "is missing", "add a routes: list with at least one route")
	}
	if f, ok := top["webhooks"]; ok {
		p.webhooks(f, t)
	}
	return t
}

// oncall reads the schedules and the escalation policies into t, the
// schedules first: policies name them.
func (p *parser) oncall(top map[string]yamlstrict.Field, t *Table) {
	if f, ok := top["schedules"]; ok {
		t.schedules = oncall.Read(&p.Walker, f)
		src, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{f.Key, f.Value}})
		if err != nil {
			p.Report(f.Key, f.Path, "cannot be written out again for the workers: "+err.Error(), "write the schedules without anchors to other parts of the file")
		}
		t.schedulesSource = src
	}
	p.policies = map[string]escalation.Policy{}
	if f, ok := top["escalation_policies"]; ok {
		for _, pol := range escalation.Read(&p.Walker, f, t.schedules) {
			p.policies[pol.Name] = pol
		}
	}
	t.policies = p.policies
}

// routes reads the routes: list into t, refusing repeated names and a
// second default route.
func (p *parser) routes(f yamlstrict.Field, def options, t *Table) {
	items := p.List(f.Value, f.Path)
	if f.Value.Kind == yaml.SequenceNode && len(items) == 0 {
		p.Report(f.Value, f.Path, "is empty", "add at least one route (a route with default: true catches every alert)")
	}
	if len(items) > maxRoutes {
		p.Report(f.Value, f.Path, fmt.Sprintf("has %d routes, more than the limit of %d", len(items), maxRoutes), "merge routes that share destinations")
		items = items[:maxRoutes]
	}
	seen := map[string]*yaml.Node{}
	var defaultNode *yaml.Node
	for i, n := range items {
		at := yamlstrict.Index(f.Path, i)
		r := p.route(n, at, def)
		if r == nil {
			continue
		}
		if prev, dup := seen[r.name]; dup {
			p.Report(n, yamlstrict.Join(at, "name"), fmt.Sprintf("%q is already the name of the route at line %d", r.name, prev.Line), "give each route its own name")
			continue
		}
		seen[r.name] = n
		if r.isDefault {
			if defaultNode != nil {
				p.Report(n, yamlstrict.Join(at, "default"), fmt.Sprintf("a second default route (the first is at line %d)", defaultNode.Line),
					"keep one default route and give it several destinations")
				continue
			}
			defaultNode, t.fallback = n, r
			continue
		}
		t.routes = append(t.routes, r)
	}
}

// webhooks reads the webhooks: list into t, refusing repeated names.
func (p *parser) webhooks(f yamlstrict.Field, t *Table) {
	for i, n := range p.List(f.Value, f.Path) {
		at := yamlstrict.Index(f.Path, i)
		g := p.webhook(n, at)
		if g == nil {
			continue
		}
		if prev, dup := t.webhooks[g.name]; dup {
			p.Report(n, yamlstrict.Join(at, "name"), fmt.Sprintf("%q is already the name of the webhook at line %d", g.name, prev.line), "give each webhook its own name")
			continue
		}
		t.webhooks[g.name] = g
	}
}
