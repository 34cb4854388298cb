package feeds

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/alerts"
)

// MaxFileBytes bounds the size of feeds.yaml.
const MaxFileBytes = 1 << 20

// LoadConfig reads and validates feeds.yaml. Every problem is reported, as
// *ConfigError values joined into one error, each naming the file, the line
// and the field.
func LoadConfig(path string) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("feeds: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("feeds: read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return File{}, &ConfigError{Path: path, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)}
	}
	return parseFile(path, data)
}

// ParseConfig parses and validates the content of a feeds.yaml file, like
// LoadConfig without the file name in errors.
func ParseConfig(data []byte) (File, error) { return parseFile("", data) }

// parseFile walks the YAML node tree by hand so that each error names the
// line of the node at fault, unknown keys are refused, and aliases (which
// could expand a small file into a huge one) are not followed.
func parseFile(path string, data []byte) (File, error) {
	f := File{path: path, lines: map[string]int{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return File{}, &ConfigError{Path: path, Msg: "the file is empty: it needs a feeds list"}
		}
		return File{}, &ConfigError{Path: path, Msg: "not valid YAML: " + err.Error()}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = 0
		}
		return File{}, &ConfigError{Path: path, Line: line, Msg: "more than one YAML document: keep a single document"}
	}
	p := &parser{path: path, file: &f}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	p.top(root)
	if len(p.errs) > 0 {
		return File{}, errors.Join(p.errs...)
	}
	if err := f.Validate(); err != nil {
		return File{}, err
	}
	return f, nil
}

// parser collects the structural problems of one file.
type parser struct {
	path string
	file *File
	errs []error
}

func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &ConfigError{Path: p.path, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// mapping calls fn for each key of a mapping node, refusing anything else,
// duplicate keys and keys not in allowed.
func (p *parser) mapping(n *yaml.Node, field string, allowed []string, fn func(key string, v *yaml.Node)) {
	if !p.usable(n, field) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "must be a mapping of %s", strings.Join(allowed, ", "))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(k, field, "keys must be plain names")
			continue
		}
		name := join(field, k.Value)
		if seen[k.Value] {
			p.fail(k, name, "is set twice")
			continue
		}
		seen[k.Value] = true
		if !contains(allowed, k.Value) {
			p.fail(k, name, "unknown setting; the settings here are %s", strings.Join(allowed, ", "))
			continue
		}
		if !p.usable(v, name) {
			continue
		}
		p.file.lines[name] = v.Line
		fn(k.Value, v)
	}
}

// usable refuses aliases and merge keys' anchors.
func (p *parser) usable(n *yaml.Node, field string) bool {
	if n.Kind == yaml.AliasNode {
		p.fail(n, field, "YAML aliases (*name) are not supported: write the value out")
		return false
	}
	return true
}

func (p *parser) top(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		p.fail(n, "", "the file is empty: it needs a feeds list")
		return
	}
	p.mapping(n, "", []string{"defaults", "feeds"}, func(key string, v *yaml.Node) {
		switch key {
		case "defaults":
			p.defaults(v)
		case "feeds":
			p.feeds(v)
		}
	})
}

func (p *parser) defaults(n *yaml.Node) {
	d := &p.file.Defaults
	p.mapping(n, "defaults", []string{"interval", "timeout", "user_agent", "severity", "source", "labels"}, func(key string, v *yaml.Node) {
		field := "defaults." + key
		switch key {
		case "interval":
			d.Interval = p.duration(v, field)
		case "timeout":
			d.Timeout = p.duration(v, field)
		case "user_agent":
			d.UserAgent = p.str(v, field)
		case "severity":
			d.Severity = alerts.Severity(p.str(v, field))
		case "source":
			d.Source = p.str(v, field)
		case "labels":
			d.Labels = p.labels(v, field)
		}
	})
}

func (p *parser) feeds(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, "feeds", "must be a list of feeds, each with a name and a url")
		return
	}
	for i, item := range n.Content {
		at := fmt.Sprintf("feeds[%d]", i)
		fd := Feed{Line: item.Line}
		p.mapping(item, at, []string{"name", "url", "interval", "timeout", "severity", "source", "labels"}, func(key string, v *yaml.Node) {
			field := at + "." + key
			switch key {
			case "name":
				fd.Name = p.str(v, field)
			case "url":
				fd.URL = p.str(v, field)
			case "interval":
				fd.Interval = p.duration(v, field)
			case "timeout":
				fd.Timeout = p.duration(v, field)
			case "severity":
				fd.Severity = alerts.Severity(p.str(v, field))
			case "source":
				fd.Source = p.str(v, field)
			case "labels":
				fd.Labels = p.labels(v, field)
			}
		})
		p.file.Feeds = append(p.file.Feeds, fd)
	}
}

// str returns a scalar's text; null counts as unset.
func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, field, "must be a single value, not a list or mapping")
		return ""
	}
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

func (p *parser) duration(n *yaml.Node, field string) time.Duration {
	s := p.str(n, field)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.fail(n, field, "%q is not a positive duration: write a number with a unit, such as 90s or 5m", s)
		return 0
	}
	return d
}

func (p *parser) labels(n *yaml.Node, field string) map[string]string {
	out := map[string]string{}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return out
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "must be a mapping of label names to values")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(k, field, "label names must be plain names")
			continue
		}
		name := field + "." + k.Value
		if _, dup := out[k.Value]; dup {
			p.fail(k, name, "is set twice")
			continue
		}
		if !p.usable(v, name) {
			continue
		}
		p.file.lines[name] = k.Line
		out[k.Value] = p.str(v, name)
	}
	return out
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
