package yamlstrict

import "go.yaml.in/yaml/v4"

// List checks that n is a list and returns its items. It returns nil when
// n is missing or not a list.
func (w *Walker) List(n *yaml.Node, path string) []*yaml.Node {
	if !w.usable(n, path) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		w.wrongType(n, path, wantList, "")
		return nil
	}
	return n.Content
}

// OneOrList is List for settings that also take a single value in place
// of a list of one: it returns the list's items, or n itself.
func (w *Walker) OneOrList(n *yaml.Node, path string) []*yaml.Node {
	if !w.usable(n, path) {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Content
	case yaml.ScalarNode:
		return []*yaml.Node{n}
	}
	w.wrongType(n, path, wantOneOrMany, "")
	return nil
}
