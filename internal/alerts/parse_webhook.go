package alerts

import (
	"fmt"
	"regexp"
	"sort"
	"text/template"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/yamlstrict"
)

// webhookFields are the alert fields a webhook sets through a template,
// besides labels.
var webhookFields = []string{"title", "body", "url", "severity", "status", "source", "fingerprint", "key", "image_url"}

// labelNamePattern limits webhook label names to what routes can match
// without quoting surprises.
var labelNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// webhook reads the entry of the webhooks: list at path at.
func (p *parser) webhook(n *yaml.Node, at string) *GenericWebhook {
	m := p.Mapping(n, at, webhookKeys)
	if m == nil {
		return nil
	}
	f, ok := m["name"]
	if !ok {
		p.Report(n, yamlstrict.Join(at, "name"), "is missing", "add name: (it becomes the last segment of the webhook's URL)")
		return nil
	}
	name, ok := p.String(f.Value, f.Path)
	if !ok {
		return nil
	}
	if !namePattern.MatchString(name) {
		p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a valid webhook name", name), nameFix)
		return nil
	}
	g := &GenericWebhook{name: name, line: n.Line}
	if _, ok := m["title"]; !ok {
		p.Report(n, yamlstrict.Join(at, "title"), "is missing", `add a title: template, e.g. title: "{{ .summary }}"`)
	}
	for _, key := range webhookFields {
		f, ok := m[key]
		if !ok {
			continue
		}
		if t := p.webhookTemplate(f, key); t != nil {
			g.fields = append(g.fields, webhookField{name: key, tmpl: t})
		}
	}
	if f, ok := m["labels"]; ok {
		g.fields = append(g.fields, p.webhookLabels(f)...)
	}
	return g
}

// webhookLabels reads a webhook's labels: mapping of label names to
// templates, sorted by name.
func (p *parser) webhookLabels(f yamlstrict.Field) []webhookField {
	var labels []webhookField
	for _, l := range p.Pairs(f.Value, f.Path) {
		if !labelNamePattern.MatchString(l.Name) {
			p.Report(l.Key, l.Path, fmt.Sprintf("%q is not a valid label name", l.Name), "use letters, digits, _ . or -, starting with a letter or _")
			continue
		}
		if t := p.webhookTemplate(l, "labels."+l.Name); t != nil {
			labels = append(labels, webhookField{name: "labels." + l.Name, tmpl: t})
		}
	}
	if len(labels) > MaxLabels {
		p.Report(f.Value, f.Path, fmt.Sprintf("has %d labels, more than the limit of %d", len(labels), MaxLabels), "keep the labels routes match on")
	}
	sort.Slice(labels, func(i, j int) bool { return labels[i].name < labels[j].name })
	return labels
}

// webhookTemplate parses the template of one alert field of a webhook,
// named after the field ("title", "labels.env") so that errors at run time
// name it. Keys missing from the body are errors (get is for optional
// ones).
func (p *parser) webhookTemplate(f yamlstrict.Field, field string) *template.Template {
	src, ok := p.String(f.Value, f.Path)
	if !ok {
		return nil
	}
	t, err := template.New(field).Option("missingkey=error").Funcs(webhookFuncs).Parse(src)
	if err != nil {
		p.templateProblem(f.Value, f.Path, err)
		return nil
	}
	return t
}
