package yamlstrict

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// An expectation is what an accessor wants a node to be: a name for the
// message ("a list") and the fix to suggest.
type expectation struct {
	name string
	fix  string
}

var (
	wantMapping   = expectation{"a mapping", "write key: value pairs indented under it"}
	wantList      = expectation{"a list", "write one item per line, each starting with '- ', or a list such as [a, b]"}
	wantScalar    = expectation{"a single value", "write one value after the colon"}
	wantOneOrMany = expectation{"one value or a list", "write one value, or a list such as [a, b]"}
	wantText      = expectation{"text", `quote the value, e.g. "value"`}
	wantBool      = expectation{"true or false", "write true or false"}
	wantInt       = expectation{"a whole number", "write digits only, such as 42"}
	wantDuration  = expectation{"a duration", "write a number with a unit, such as 90s or 5m"}
)

// wrongType reports that n is not what was expected, naming both. hint,
// when not empty, is added to the fix (the keys a mapping takes, say).
func (w *Walker) wrongType(n *yaml.Node, path string, want expectation, hint string) {
	fix := want.fix
	if hint != "" {
		fix += " (" + hint + ")"
	}
	what := fmt.Sprintf("got %s, expected %s", describe(n), want.name)
	if path == "" {
		what = fmt.Sprintf("the document is %s, expected %s", describe(n), want.name)
	}
	w.Report(n, path, what, fix)
}

// describe names what a node holds, for "got ..." in messages: its kind,
// or for a single value the value itself (shortened).
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	if isNull(n) {
		return "nothing"
	}
	v := n.Value
	if utf8.RuneCountInString(v) > 40 {
		v = string([]rune(v)[:40]) + "…"
	}
	return strconv.Quote(v)
}

// isNull reports whether n is an empty value: "~", "null" or nothing at
// all after the colon.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// IsNull reports whether n is present but empty ("key:" with nothing
// after it, "~" or "null"). Callers use it where an empty value means
// "unset" rather than a mistake.
func IsNull(n *yaml.Node) bool { return n != nil && isNull(n) }
