package feeds

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// maxFileBytes bounds the size of feeds.yaml.
const maxFileBytes = 1 << 20

// The keys feeds.yaml takes, per mapping.
var (
	topKeys      = []string{"defaults", "feeds"}
	defaultsKeys = []string{"interval", "timeout", "user_agent", "severity", "source", "labels"}
	feedKeys     = []string{"name", "url", "interval", "timeout", "severity", "source", "labels"}
)

// LoadConfig reads and validates feeds.yaml. Every problem is reported, as
// *configError values joined into one error, each naming the file, the line
// and column, and the field.
func LoadConfig(path string) (file, error) {
	fh, err := os.Open(path)
	if err != nil {
		return file{}, fmt.Errorf("feeds: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return file{}, fmt.Errorf("feeds: read %s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return file{}, &configError{Path: path, Msg: fmt.Sprintf("the file is larger than %d bytes; split the feeds over several pollers", maxFileBytes)}
	}
	return parseFile(path, data)
}

// parseFile reads the file's structure with the strict walker (unknown or
// repeated keys, wrong types and aliases are refused, each at its line and
// column), then checks the values with file.Validate.
func parseFile(path string, data []byte) (file, error) {
	p := &parser{file: file{path: path, lines: map[string]position{}}}
	if root := p.Document(data, "add a feeds: list with at least one feed (a name and a url)"); root != nil {
		p.top(root)
	}
	if p.Failed() {
		return file{}, p.configErrors(path)
	}
	if err := p.file.Validate(); err != nil {
		return file{}, err
	}
	return p.file, nil
}

// position is where a setting is written in the file.
type position struct{ line, column int }

// parser fills a file from the node tree, remembering where each setting
// is so that file.Validate can point at it.
type parser struct {
	yamlstrict.Walker
	file file
}

// configErrors turns the walker's problems into joined *configError values.
func (p *parser) configErrors(path string) error {
	var errs []error
	for _, pr := range p.Problems() {
		errs = append(errs, &configError{Path: path, Line: pr.Line, Column: pr.Column, Field: pr.Path, Msg: pr.Detail()})
	}
	return errors.Join(errs...)
}

// mapping is Walker.Mapping that also records where each setting is. A
// setting left out is placed where the mapping starts, so that "is
// required" points at the entry that lacks it.
func (p *parser) mapping(n *yaml.Node, path string, keys []string) map[string]yamlstrict.Field {
	m := p.Mapping(n, path, keys)
	if m == nil {
		return nil
	}
	for _, k := range keys {
		if f, ok := m[k]; ok {
			p.mark(f.Path, f.Value)
		} else {
			p.mark(yamlstrict.Join(path, k), n)
		}
	}
	return m
}

func (p *parser) mark(path string, n *yaml.Node) {
	p.file.lines[path] = position{n.Line, n.Column}
}

func (p *parser) top(root *yaml.Node) {
	m := p.mapping(root, "", topKeys)
	p.defaults(m["defaults"])
	p.feeds(m["feeds"])
}

func (p *parser) defaults(f yamlstrict.Field) {
	m := p.mapping(f.Value, f.Path, defaultsKeys)
	d := &p.file.Defaults
	d.Interval = p.duration(m["interval"])
	d.Timeout = p.duration(m["timeout"])
	d.UserAgent = p.str(m["user_agent"])
	d.Severity = alerts.Severity(p.str(m["severity"]))
	d.Source = p.str(m["source"])
	d.Labels = p.labels(m["labels"])
}

func (p *parser) feeds(f yamlstrict.Field) {
	for i, item := range p.List(f.Value, f.Path) {
		m := p.mapping(item, yamlstrict.Index(f.Path, i), feedKeys)
		p.file.Feeds = append(p.file.Feeds, feed{
			Name:     p.str(m["name"]),
			URL:      p.str(m["url"]),
			Interval: p.duration(m["interval"]),
			Timeout:  p.duration(m["timeout"]),
			Severity: alerts.Severity(p.str(m["severity"])),
			Source:   p.str(m["source"]),
			Labels:   p.labels(m["labels"]),
			Line:     item.Line,
		})
	}
}

// str returns a setting's text; a setting left out or empty is "".
func (p *parser) str(f yamlstrict.Field) string {
	s, _ := p.String(f.Value, f.Path)
	return s
}

// duration returns a positive duration; a setting left out or empty is 0,
// which file.WithDefaults replaces.
func (p *parser) duration(f yamlstrict.Field) time.Duration {
	if yamlstrict.IsNull(f.Value) {
		return 0
	}
	d, ok := p.Duration(f.Value, f.Path)
	if ok && d <= 0 {
		p.Report(f.Value, f.Path, fmt.Sprintf("%q is not a positive duration", f.Value.Value), "write a number with a unit, such as 90s or 5m")
		return 0
	}
	return d
}

// labels returns a mapping of label names to values; file.Validate checks
// the names.
func (p *parser) labels(f yamlstrict.Field) map[string]string {
	if f.Value == nil {
		return nil
	}
	out := map[string]string{}
	for _, l := range p.Pairs(f.Value, f.Path) {
		p.mark(l.Path, l.Key)
		out[l.Name], _ = p.String(l.Value, l.Path)
	}
	return out
}
