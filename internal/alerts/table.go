package alerts

import (
	"os"

	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/oncall/roster"
)

// Table is a parsed and validated routing file: the routes in file order,
// the optional default route and the generic webhook mappings. A Table is
// immutable once built, so one value may serve any number of goroutines;
// reloading builds a new Table and swaps it into the Router.
type Table struct {
	source   string
	routes   []*route
	fallback *route
	webhooks map[string]*GenericWebhook
	// bot is the defaults' bot ("" the default bot).
	bot       string
	schedules []oncall.Schedule
	policies  map[string]escalation.Policy
	// schedulesSource is the schedules: section as YAML.
	schedulesSource []byte
}

// Catalog is the file's escalation policies, for the escalation engine.
func (t *Table) Catalog() escalation.Catalog {
	return escalation.Catalog{Policies: t.policies}
}

// Schedules is the file's on-call schedules, for the roster: the
// escalation engine's on_call targets, the on-call API and the handoff
// announcements.
func (t *Table) Schedules() roster.Catalog {
	c := roster.Catalog{Schedules: make(map[string]oncall.Schedule, len(t.schedules)), Bot: t.bot, Source: t.schedulesSource}
	for _, s := range t.schedules {
		c.Schedules[s.Name] = s
	}
	return c
}

// LoadRoutes reads and parses the routing file at path (see ParseRoutes).
func LoadRoutes(path string) (*Table, error) {
	return LoadRoutesWith(path, ParseOptions{})
}

// LoadRoutesWith reads and parses the routing file at path, checking it
// against opts (see ParseRoutesWith).
func LoadRoutesWith(path string, opts ParseOptions) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRoutesWith(path, data, opts)
}

// Source is the file name the table was parsed from.
func (t *Table) Source() string { return t.source }

// GenericWebhook returns the generic JSON webhook mapping called name, and
// whether the routing file defines one.
func (t *Table) GenericWebhook(name string) (*GenericWebhook, bool) {
	g, ok := t.webhooks[name]
	return g, ok
}

// match returns the routes an alert goes to: every matching route in file
// order, or the default route when none matched (nil when there is none).
func (t *Table) match(a *Alert) []*route {
	var out []*route
	for _, r := range t.routes {
		if r.matches(a) {
			out = append(out, r)
		}
	}
	if len(out) == 0 && t.fallback != nil {
		out = append(out, t.fallback)
	}
	return out
}
