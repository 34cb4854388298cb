package alerts

import (
	"fmt"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// chatFix is the fix for a missing or invalid chat.
const chatFix = `use a numeric chat id such as "-1001234567890" or an @channel username`

// destinations reads a route's destinations: list, refusing repeats.
func (p *parser) destinations(f yamlstrict.Field) []destination {
	items := p.List(f.Value, f.Path)
	if f.Value.Kind == yaml.SequenceNode && len(items) == 0 {
		p.Report(f.Value, f.Path, "is empty", "add at least one chat")
	}
	if len(items) > maxDestinations {
		p.Report(f.Value, f.Path, fmt.Sprintf("has %d destinations, more than the limit of %d", len(items), maxDestinations),
			"send to a group or channel that everyone concerned is in")
		items = items[:maxDestinations]
	}
	var out []destination
	seen := map[destination]int{}
	for i, item := range items {
		at := yamlstrict.Index(f.Path, i)
		d, ok := p.destination(item, at)
		if !ok {
			continue
		}
		if line, dup := seen[d]; dup {
			p.Report(item, at, fmt.Sprintf("destination %s is listed twice (first at line %d)", d.key(), line), "keep one")
			continue
		}
		seen[d] = item.Line
		out = append(out, d)
	}
	return out
}

// destination reads one destination: a bare chat, or a mapping with chat:
// and an optional forum topic (thread:).
func (p *parser) destination(item *yaml.Node, at string) (destination, bool) {
	var d destination
	chat := yamlstrict.Field{Value: item, Path: at}
	if item.Kind != yaml.ScalarNode {
		m := p.Mapping(item, at, destinationKeys)
		if m == nil {
			return d, false
		}
		f, ok := m["chat"]
		if !ok {
			p.Report(item, yamlstrict.Join(at, "chat"), "is missing", `add chat: with a numeric chat id such as "-1001234567890" or an @channel username`)
			return d, false
		}
		chat = f
		if f, ok := m["thread"]; ok {
			if id, ok := p.Int(f.Value, f.Path); ok && id <= 0 {
				p.Report(f.Value, f.Path, fmt.Sprintf("%d is not a forum topic id", id), "use the topic's id, a positive whole number")
			} else if ok {
				d.thread = id
			}
		}
	}
	s, ok := p.String(chat.Value, chat.Path)
	if !ok {
		return d, false
	}
	c, err := jobs.ValidateChat(s)
	if err != nil {
		p.Report(chat.Value, chat.Path, err.Error(), chatFix)
		return d, false
	}
	d.chat = c
	return d, true
}
