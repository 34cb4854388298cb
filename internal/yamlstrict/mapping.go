package yamlstrict

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Field is one entry of a mapping.
type Field struct {
	// Key and Value are the entry's nodes; both are nil for a key the
	// mapping does not have.
	Key   *yaml.Node
	Value *yaml.Node
	// Name is the key's text.
	Name string
	// Path is the path of the value, such as "feeds[0].url".
	Path string
}

// Mapping checks that n is a mapping whose keys are all in known, each
// written once, and returns its entries by key. An unknown key is reported
// with the closest known key as a suggestion; a repeated key is reported
// at its second occurrence and only the first is returned. The result is
// nil when n is missing or not a mapping; indexing a nil map is fine and
// gives a Field with nil nodes.
func (w *Walker) Mapping(n *yaml.Node, path string, known []string) map[string]Field {
	if !w.usable(n, path) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.wrongType(n, path, wantMapping, "keys: "+strings.Join(known, ", "))
		return nil
	}
	out := make(map[string]Field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.Report(k, path, fmt.Sprintf("has a key that is %s, not a name", describe(k)), "use one of "+strings.Join(known, ", "))
			continue
		}
		at := Join(path, k.Value)
		if !slices.Contains(known, k.Value) {
			w.Report(k, at, "unknown key", Suggest(k.Value, known))
			continue
		}
		if w.repeated(out, k.Value, k, at) {
			continue
		}
		out[k.Value] = Field{Key: k, Value: v, Name: k.Value, Path: at}
	}
	return out
}

// Pairs checks that n is a mapping of names to values, for settings whose
// keys the author chooses (labels, say): every key must be a non-empty
// single value, written once. It returns the entries in file order, the
// repeated ones left out. An empty value (null) gives no entries and no
// problem.
func (w *Walker) Pairs(n *yaml.Node, path string) []Field {
	if !w.usable(n, path) || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		w.wrongType(n, path, wantMapping, "name: value, such as {team: db}")
		return nil
	}
	var out []Field
	seen := make(map[string]Field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, ok := w.String(k, path)
		if !ok {
			continue
		}
		at := Join(path, name)
		if name == "" {
			w.Report(k, path, "has an empty key", "write a name before the colon")
			continue
		}
		if w.repeated(seen, name, k, at) {
			continue
		}
		f := Field{Key: k, Value: v, Name: name, Path: at}
		seen[name] = f
		out = append(out, f)
	}
	return out
}

// repeated reports key k, named name, when seen already holds it.
func (w *Walker) repeated(seen map[string]Field, name string, k *yaml.Node, path string) bool {
	first, dup := seen[name]
	if !dup {
		return false
	}
	where := fmt.Sprintf("line %d", first.Key.Line)
	if first.Key.Line == k.Line {
		where += fmt.Sprintf(", column %d", first.Key.Column)
	}
	w.Report(k, path, "the key is written twice (first at "+where+")", "keep one")
	return true
}
