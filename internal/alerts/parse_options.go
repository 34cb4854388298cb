package alerts

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// options are the settings a route inherits from defaults.
type options struct {
	// bot is the bot that sends, as written ("" when none is named);
	// botNode and botPath say where, nil when nowhere.
	bot     string
	botNode *yaml.Node
	botPath string
	mode    markup.Mode
	// tmplSrc is the message template; tmplNode and tmplPath say where it
	// is written (in defaults or in the route), nil for the built-in one.
	tmplSrc   string
	tmplNode  *yaml.Node
	tmplPath  string
	queue     string
	coalesce  bool
	silent    *bool
	noPreview bool
	// onResolve, buttons and allowed are read by interaction; "" and nil
	// when unset.
	onResolve string
	buttons   []string
	allowed   []string
}

// options reads the keys shared by defaults and routes into o, and returns
// every entry of the mapping (nil when it is not one).
func (p *parser) options(f yamlstrict.Field, o *options, known []string) map[string]yamlstrict.Field {
	m := p.Mapping(f.Value, f.Path, known)
	if m == nil {
		return nil
	}
	if f, ok := m["bot"]; ok {
		if s, ok := p.String(f.Value, f.Path); ok {
			if keys.ValidBotName(s) {
				o.bot, o.botNode, o.botPath = s, f.Value, f.Path
			} else {
				p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a bot name", s), p.botFix())
			}
		}
	}
	if f, ok := m["parse_mode"]; ok {
		if s, ok := p.String(f.Value, f.Path); ok {
			mode, err := markup.ParseMode(s)
			if err != nil || strings.TrimSpace(s) == "" {
				p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a supported parse mode", s), "use HTML, MarkdownV2 or plain")
			} else {
				o.mode = mode
			}
		}
	}
	if f, ok := m["template"]; ok {
		if s, ok := p.String(f.Value, f.Path); ok {
			// An empty template selects the built-in one again.
			o.tmplSrc, o.tmplNode, o.tmplPath = s, f.Value, f.Path
			if strings.TrimSpace(s) == "" {
				o.tmplNode = nil
			}
		}
	}
	if f, ok := m["queue"]; ok {
		if s, ok := p.String(f.Value, f.Path); ok {
			switch s {
			case jobs.QueueCritical, jobs.QueueDefault, jobs.QueueLow:
				o.queue = s
			default:
				p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a known queue", s),
					"use critical, default or low, or leave it out (critical alerts then go to critical, the rest to default)")
			}
		}
	}
	if b, ok := p.flag(m, "coalesce"); ok {
		o.coalesce = b
	}
	if b, ok := p.flag(m, "disable_notification"); ok {
		o.silent = &b
	}
	if b, ok := p.flag(m, "disable_link_preview"); ok {
		o.noPreview = b
	}
	return m
}

// flag reads the true or false setting key of m; ok is false when it is
// left out or not a boolean.
func (p *parser) flag(m map[string]yamlstrict.Field, key string) (b, ok bool) {
	f := m[key]
	return p.Bool(f.Value, f.Path)
}

// knownBot reports whether a route may send as the bot called name ("":
// the default bot).
func (p *parser) knownBot(name string) bool {
	if p.bots == nil {
		return true
	}
	if name == "" {
		name = keys.DefaultBot
	}
	return slices.Contains(p.bots, name)
}

// botFix is the fix for a bot a route may not name: the known bots, or the
// rule for a name when any is accepted.
func (p *parser) botFix() string {
	if p.bots == nil {
		return fmt.Sprintf("use 1 to %d lower-case letters, digits, _ or -, starting with a letter", keys.MaxBotName)
	}
	return "use one of its bots: " + strings.Join(p.bots, ", ") + " (HERALD_BOTS)"
}
