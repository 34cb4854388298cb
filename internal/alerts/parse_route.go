package alerts

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// route reads the route at path at. It returns nil when the route has no
// valid name: its other problems are still reported, but comparing it with
// the other routes would only add noise.
func (p *parser) route(n *yaml.Node, at string, def options) *route {
	o := def
	m := p.options(yamlstrict.Field{Value: n, Path: at}, &o, routeKeys)
	if m == nil {
		return nil
	}
	r := &route{}
	named := false
	if f, ok := m["name"]; !ok {
		p.Report(n, yamlstrict.Join(at, "name"), "is missing", "add name: with letters, digits, _ . or -")
	} else if s, ok := p.String(f.Value, f.Path); ok {
		if namePattern.MatchString(s) {
			named = true
		} else {
			p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a valid route name", s), nameFix)
		}
		r.name = s
	}
	who := "this route"
	if named {
		who = fmt.Sprintf("route %q", r.name)
	}
	p.interaction(m, &o, who)
	r.onResolve, r.buttons, r.allowed = o.onResolve, o.buttons, o.allowed
	if r.onResolve == "" {
		r.onResolve = resolveReply
	}
	if len(r.buttons) == 0 {
		r.buttons, r.allowed = nil, nil
	}
	if f, ok := m["default"]; ok {
		r.isDefault, _ = p.Bool(f.Value, f.Path)
	}
	if f, ok := m["match"]; ok {
		if r.isDefault {
			p.Report(f.Key, f.Path, "the default route takes no match (it receives the alerts no other route took)", "remove match: or default: true")
		} else {
			r.match = p.matcher(f)
		}
	}
	if f, ok := m["quiet_hours"]; ok {
		r.quiet = p.quietHours(f)
	}
	if f, ok := m["escalation"]; ok {
		r.escalation = p.routeEscalation(f, o)
	}
	if f, ok := m["alertmanager"]; ok {
		r.alertmanager = p.alertmanager(f, r.buttons, who)
	}
	if f, ok := m["destinations"]; ok {
		r.destinations = p.destinations(f)
	} else {
		p.Report(n, yamlstrict.Join(at, "destinations"), "is missing", "add destinations: with at least one chat")
	}
	p.routeBot(n, at, m, o, r.name)
	r.bot = o.bot
	if r.bot == keys.DefaultBot {
		r.bot = "" // one spelling in payloads and idempotency
	}
	r.mode, r.queue, r.coalesce, r.silent, r.noPreview = o.mode, o.queue, o.coalesce, o.silent, o.noPreview
	if o.tmplNode != nil {
		r.tmpl = p.template(o.tmplNode, o.tmplPath, o.tmplSrc, r.name, o.mode)
	}
	if !named {
		return nil
	}
	return r
}

// routeEscalation reads a route's escalation: the name of a policy of the
// file. An escalated alert needs a message of its own that the steps
// reply to, which a digest is not.
func (p *parser) routeEscalation(f yamlstrict.Field, o options) string {
	s, ok := p.String(f.Value, f.Path)
	if !ok {
		return ""
	}
	if _, known := p.policies[s]; !known {
		p.Report(f.Value, f.Path, fmt.Sprintf("%q names no escalation policy of this file", s), "name one of escalation_policies:, or add it there")
		return ""
	}
	if o.coalesce {
		p.Report(f.Key, f.Path, "an escalated alert needs a message of its own to reply to, and this route coalesces", "remove coalesce: true from the route (or its defaults), or the escalation")
		return ""
	}
	return s
}

// routeBot checks the bot a route sends as against the known bots. A bot
// written in the route is reported there; one inherited from defaults was
// checked there once. A route naming none sends as the default bot, which
// must then be known.
func (p *parser) routeBot(n *yaml.Node, at string, m map[string]yamlstrict.Field, o options, name string) {
	if p.knownBot(o.bot) {
		return
	}
	if f, own := m["bot"]; own && o.botNode == f.Value {
		p.Report(f.Value, f.Path, fmt.Sprintf("route %q names the bot %q, which is not a bot of this Herald", name, o.bot), p.botFix())
		return
	}
	if o.botNode == nil {
		p.Report(n, yamlstrict.Join(at, "bot"), fmt.Sprintf("route %q names no bot, and this Herald has no bot %q to send it", name, keys.DefaultBot),
			"add bot: with one of its bots: "+strings.Join(p.bots, ", ")+" (HERALD_BOTS), or a bot: under defaults:")
	}
}

// matcher reads a route's match: conditions.
func (p *parser) matcher(f yamlstrict.Field) matcher {
	var mt matcher
	m := p.Mapping(f.Value, f.Path, matchKeys)
	if f, ok := m["source"]; ok {
		for _, v := range p.OneOrList(f.Value, f.Path) {
			if s, ok := p.String(v, f.Path); ok {
				if vm, ok := p.valueMatcher(v, f.Path, s); ok {
					mt.sources = append(mt.sources, vm)
				}
			}
		}
	}
	if f, ok := m["severity"]; ok {
		for _, v := range p.OneOrList(f.Value, f.Path) {
			s, ok := p.String(v, f.Path)
			if !ok {
				continue
			}
			switch sv := Severity(strings.ToLower(strings.TrimSpace(s))); sv {
			case SeverityCritical, SeverityWarning, SeverityInfo:
				mt.severities = append(mt.severities, sv)
			default:
				p.Report(v, f.Path, fmt.Sprintf("%q is not a known severity", s), "use critical, warning or info (or a list of them)")
			}
		}
	}
	if f, ok := m["labels"]; ok {
		for _, l := range p.Pairs(f.Value, f.Path) {
			s, ok := p.String(l.Value, l.Path)
			if !ok {
				continue
			}
			if vm, ok := p.valueMatcher(l.Value, l.Path, s); ok {
				mt.labels = append(mt.labels, labelMatcher{name: l.Name, valueMatcher: vm})
			}
		}
	}
	return mt
}

// valueMatcher compiles "=~regexp" values (anchored at both ends); other
// values match exactly.
func (p *parser) valueMatcher(n *yaml.Node, path, s string) (valueMatcher, bool) {
	if !strings.HasPrefix(s, regexPrefix) {
		return valueMatcher{exact: s}, true
	}
	expr := strings.TrimPrefix(s, regexPrefix)
	if _, err := regexp.Compile(expr); err != nil {
		p.Report(n, path, fmt.Sprintf("bad regular expression %q: %s", expr, strings.TrimPrefix(err.Error(), "error parsing regexp: ")),
			"use Go RE2 syntax (the expression after =~ must match the whole value)")
		return valueMatcher{}, false
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		p.Report(n, path, fmt.Sprintf("bad regular expression %q: %s", expr, err), "use Go RE2 syntax")
		return valueMatcher{}, false
	}
	return valueMatcher{re: re}, true
}
