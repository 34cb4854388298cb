package yamlstrict

import (
	"fmt"

	"go.yaml.in/yaml/v4"
)

// usable reports whether an accessor may look into n: it must be present
// and not an alias. A nil node is a key the file left out and is not a
// problem; an alias is reported. Aliases are refused because a few lines
// of them can stand for a tree of millions of nodes, and because a file
// read by people should say what it means where it means it.
func (w *Walker) usable(n *yaml.Node, path string) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.AliasNode {
		w.Report(n, path, fmt.Sprintf("uses the YAML alias *%s, and aliases are not supported", n.Value), "write the value out in full")
		return false
	}
	return true
}
