// Package yamlstrict reads hand-written YAML configuration files strictly,
// and explains every mistake in one style.
//
// Herald's configuration files (the routing file, the feed list) are small
// and written by people, so a mistake in one of them should be reported the
// way a compiler reports a mistake in source code: where it is, what is
// wrong, and what to write instead. Decoding straight into Go structs gives
// the Go type of a field rather than the setting's name, cannot suggest the
// key the author meant, stops at the first syntax or structure problem and
// expands aliases. This package therefore works on the yaml.Node tree and
// lets the caller walk it by hand.
//
// # Walking a file
//
// A Walker collects problems while the caller descends the tree:
//
//	var w yamlstrict.Walker
//	root := w.Document(data, "add a feeds: list")
//	top := w.Mapping(root, "", []string{"defaults", "feeds"})
//	if f, ok := top["feeds"]; ok {
//		for i, item := range w.List(f.Value, f.Path) {
//			feed := w.Mapping(item, yamlstrict.Index(f.Path, i), feedKeys)
//			name, _ := w.String(feed["name"].Value, feed["name"].Path)
//			...
//		}
//	}
//	return w.Err(path)
//
// Each accessor checks one thing about one node and, when the node is not
// what the caller asked for, records a Problem at the node's line and
// column and returns a zero value with ok false (or an empty result). The
// caller carries on, so one pass reports every mistake of the file rather
// than the first. Accessors are safe on a nil node (a key the file left
// out): they return the zero value without a problem, which keeps the
// caller's code free of nil checks for optional keys.
//
// What the accessors refuse:
//
//   - keys a Mapping does not list, with a "did you mean" suggestion when an
//     allowed key is a small edit away (see Suggest);
//   - a key written twice in one mapping;
//   - keys that are not plain names (a list or mapping used as a key);
//   - a node of the wrong kind or type, naming the kind found and the one
//     expected ("got a list, expected true or false");
//   - YAML aliases (*name), which could expand a small file into a huge
//     tree; anchors (&name) alone are harmless and allowed;
//   - an empty file, a second document after '---', and syntax errors,
//     which Document reports at the position yaml.v4 gives.
//
// Checks that belong to one file (a URL's scheme, a name's syntax, a value
// out of range) stay with the caller, which records them through Report
// so that they read like the walker's own.
//
// # The error style
//
// Every Problem prints as
//
//	file:line:column: path: what is wrong; how to fix it
//
// where path names the setting in the file ("feeds[2].url",
// "routes[0].match.severity"), and is left out for problems with the file
// as a whole. Line and column are 1-based; a position yaml.v4 could not
// tell is left out too. Error joins the problems of one file, in file
// order, one per line.
package yamlstrict
