package yamlstrict

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// settings walks a small file with every accessor, the way a caller does:
//
//	name: text
//	enabled: true or false
//	retries: a whole number
//	every: a duration
//	tags: one value or a list
//	servers: a list of {host, port}
//	labels: free-form names to text
func settings(w *Walker, data string) {
	root := w.Document([]byte(data), "add a name: setting")
	top := w.Mapping(root, "", []string{"name", "enabled", "retries", "every", "tags", "servers", "labels"})
	w.String(top["name"].Value, top["name"].Path)
	w.Bool(top["enabled"].Value, top["enabled"].Path)
	w.Int(top["retries"].Value, top["retries"].Path)
	w.Duration(top["every"].Value, top["every"].Path)
	for _, t := range w.OneOrList(top["tags"].Value, top["tags"].Path) {
		w.String(t, top["tags"].Path)
	}
	for i, s := range w.List(top["servers"].Value, top["servers"].Path) {
		at := Index(top["servers"].Path, i)
		m := w.Mapping(s, at, []string{"host", "port"})
		w.String(m["host"].Value, m["host"].Path)
		w.Int(m["port"].Value, m["port"].Path)
	}
	for _, l := range w.Pairs(top["labels"].Value, top["labels"].Path) {
		w.String(l.Value, l.Path)
	}
}

func TestWalkerProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		// want are the problems, formatted for a file named "f.yaml", in
		// the order reported.
		want []string
	}{
		{"valid", "name: a\nenabled: false\nretries: 3\nevery: 90s\ntags: [x, 5]\nservers:\n  - {host: h, port: 1}\nlabels: {team: db}\n", nil},
		{"unknown key with suggestion", "nmae: a\n", []string{
			`f.yaml:1:1: nmae: unknown key; did you mean "name"?`}},
		{"unknown key, case only", "Enabled: true\n", []string{
			`f.yaml:1:1: Enabled: unknown key; did you mean "enabled"?`}},
		{"unknown key without suggestion", "colour: red\n", []string{
			"f.yaml:1:1: colour: unknown key; use one of name, enabled, retries, every, tags, servers, labels"}},
		{"unknown nested key with suggestion", "servers:\n  - host: h\n    prot: 8\n", []string{
			`f.yaml:3:5: servers[0].prot: unknown key; did you mean "port"?`}},
		{"duplicate key", "name: a\nretries: 1\nname: b\n", []string{
			"f.yaml:3:1: name: the key is written twice (first at line 1); keep one"}},
		{"duplicate key on one line", "labels: {a: 1, a: 2}\n", []string{
			"f.yaml:1:16: labels.a: the key is written twice (first at line 1, column 10); keep one"}},
		{"duplicate nested key", "servers:\n  - host: a\n  - host: b\n    port: 1\n    host: c\n", []string{
			"f.yaml:5:5: servers[1].host: the key is written twice (first at line 3); keep one"}},
		{"list for text", "name: [a, b]\n", []string{
			"f.yaml:1:7: name: got a list, expected a single value; write one value after the colon"}},
		{"mapping for a list", "servers: {host: a}\n", []string{
			"f.yaml:1:10: servers: got a mapping, expected a list; write one item per line, each starting with '- ', or a list such as [a, b]"}},
		{"text for a boolean", "enabled: yes\n", []string{
			`f.yaml:1:10: enabled: got "yes", expected true or false; write true or false`}},
		{"nothing for a boolean", "enabled:\n", []string{
			"f.yaml:1:9: enabled: got nothing, expected true or false; write true or false"}},
		{"text for a number", "retries: many\n", []string{
			`f.yaml:1:10: retries: got "many", expected a whole number; write digits only, such as 42`}},
		{"bad duration", "every: 5 minutes\n", []string{
			`f.yaml:1:8: every: got "5 minutes", expected a duration; write a number with a unit, such as 90s or 5m`}},
		{"mapping in one-or-list", "tags: {a: b}\n", []string{
			"f.yaml:1:7: tags: got a mapping, expected one value or a list; write one value, or a list such as [a, b]"}},
		{"tagged value", "name: !!binary aGk=\n", []string{
			"f.yaml:1:7: name: has the tag !!binary, expected text; remove the tag, or quote the value, e.g. \"value\""}},
		{"list as a key", "[a]: 1\n", []string{
			"f.yaml:1:1: has a key that is a list, not a name; use one of name, enabled, retries, every, tags, servers, labels"}},
		{"empty label name", "labels: {'': x}\n", []string{
			"f.yaml:1:10: labels: has an empty key; write a name before the colon"}},
		{"labels not a mapping", "labels: [a]\n", []string{
			"f.yaml:1:9: labels: got a list, expected a mapping; write key: value pairs indented under it (name: value, such as {team: db})"}},
		{"document not a mapping", "- a\n", []string{
			"f.yaml:1:1: the document is a list, expected a mapping; write key: value pairs indented under it (keys: name, enabled, retries, every, tags, servers, labels)"}},
		{"alias", "name: &n a\nlabels: {x: *n}\n", []string{
			"f.yaml:2:13: labels.x: uses the YAML alias *n, and aliases are not supported; write the value out in full"}},
		{"alias for a mapping", "servers:\n  - &s {host: a}\n  - *s\n", []string{
			"f.yaml:3:5: servers[1]: uses the YAML alias *s, and aliases are not supported; write the value out in full"}},
		{"deep position", "servers:\n  - host: a\n    port: 1\n  - host: b\n    port:\n      - 2\n", []string{
			"f.yaml:6:7: servers[1].port: got a list, expected a single value; write one value after the colon"}},
		{"several problems in file order", "retries: x\nname: [a]\nnmae: b\n", []string{
			`f.yaml:1:10: retries: got "x", expected a whole number; write digits only, such as 42`,
			"f.yaml:2:7: name: got a list, expected a single value; write one value after the colon",
			`f.yaml:3:1: nmae: unknown key; did you mean "name"?`}},
		{"empty file", "", []string{"f.yaml:1:1: the file is empty; add a name: setting"}},
		{"only comments", "# later\n", []string{"f.yaml:1:1: the file is empty; add a name: setting"}},
		{"null document", "~\n", []string{"f.yaml:1:1: the file is empty; add a name: setting"}},
		{"second document", "name: a\n---\nname: b\n", []string{
			"f.yaml:2:1: a second YAML document starts here; remove the '---' separator and what follows it: the file holds one document"}},
		{"syntax error", "name: a\n  retries: 1\n", []string{
			"f.yaml:2:10: invalid YAML: mapping values are not allowed in this context; check the indentation, quotes and brackets at this point"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w Walker
			settings(&w, tc.data)
			var got []string
			for _, p := range w.Problems() {
				got = append(got, p.Format("f.yaml"))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if err := w.Err("f.yaml"); (err == nil) != (len(tc.want) == 0) {
				t.Errorf("Err() = %v with %d problems", err, len(tc.want))
			}
		})
	}
}

func TestAccessorValues(t *testing.T) {
	t.Parallel()
	var w Walker
	root := w.Document([]byte("s: 5\nb: TRUE\ni: -7\nd: 1h30m\nn:\nt: 2026-01-02\nl: [a, b]\none: c\n"), "")
	m := w.Mapping(root, "", []string{"s", "b", "i", "d", "n", "t", "l", "one", "absent"})
	if s, ok := w.String(m["s"].Value, "s"); !ok || s != "5" {
		t.Errorf("String = %q, %v", s, ok)
	}
	if b, ok := w.Bool(m["b"].Value, "b"); !ok || !b {
		t.Errorf("Bool = %v, %v", b, ok)
	}
	if i, ok := w.Int(m["i"].Value, "i"); !ok || i != -7 {
		t.Errorf("Int = %v, %v", i, ok)
	}
	if d, ok := w.Duration(m["d"].Value, "d"); !ok || d != 90*time.Minute {
		t.Errorf("Duration = %v, %v", d, ok)
	}
	if s, ok := w.String(m["n"].Value, "n"); !ok || s != "" || !IsNull(m["n"].Value) {
		t.Errorf("String of null = %q, %v", s, ok)
	}
	if s, ok := w.String(m["t"].Value, "t"); !ok || s != "2026-01-02" {
		t.Errorf("String of a date = %q, %v", s, ok)
	}
	if l := w.List(m["l"].Value, "l"); len(l) != 2 || l[1].Value != "b" {
		t.Errorf("List = %v", l)
	}
	if l := w.OneOrList(m["one"].Value, "one"); len(l) != 1 || l[0].Value != "c" {
		t.Errorf("OneOrList of a value = %v", l)
	}
	// A key the file leaves out reads as nothing, without a problem.
	absent := m["absent"]
	if _, ok := w.String(absent.Value, absent.Path); ok {
		t.Error("String of an absent key is ok")
	}
	if w.Mapping(absent.Value, absent.Path, nil) != nil || w.List(absent.Value, absent.Path) != nil || w.Pairs(absent.Value, absent.Path) != nil {
		t.Error("an absent key gave entries")
	}
	if IsNull(absent.Value) {
		t.Error("IsNull(nil)")
	}
	if w.Failed() {
		t.Fatalf("problems: %v", w.Err("f.yaml"))
	}
}

func TestPairsKeepsFileOrder(t *testing.T) {
	t.Parallel()
	var w Walker
	root := w.Document([]byte("z: 1\na: 2\nm: 3\na: 4\n"), "")
	var names []string
	for _, f := range w.Pairs(root, "labels") {
		names = append(names, f.Name+"="+f.Value.Value+"@"+f.Path)
	}
	if want := []string{"z=1@labels.z", "a=2@labels.a", "m=3@labels.m"}; !slices.Equal(names, want) {
		t.Errorf("pairs %v, want %v", names, want)
	}
	if ps := w.Problems(); len(ps) != 1 || ps[0].Line != 4 || ps[0].Path != "labels.a" {
		t.Errorf("problems %v", ps)
	}
}

func TestProblemsSortedCompactedCapped(t *testing.T) {
	t.Parallel()
	var w Walker
	n := &yaml.Node{Line: 3, Column: 2}
	w.Report(n, "b", "late", "fix")
	w.ReportAt(1, 5, "a", "early", "fix")
	w.Report(n, "b", "late", "fix") // the same mistake, reached twice
	w.Report(nil, "", "nowhere", "")
	got := w.Problems()
	want := []Problem{
		{What: "nowhere"},
		{Line: 1, Column: 5, Path: "a", What: "early", Fix: "fix"},
		{Line: 3, Column: 2, Path: "b", What: "late", Fix: "fix"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems %+v\nwant %+v", got, want)
	}

	var many Walker
	for i := range maxProblems + 7 {
		many.ReportAt(i+1, 1, "k", "bad", "fix")
	}
	ps := many.Problems()
	if len(ps) != maxProblems+1 || ps[maxProblems].What != "and 7 more problems" {
		t.Fatalf("%d problems, last %+v", len(ps), ps[len(ps)-1])
	}
}

func TestDocumentRefusesUnknownAnchor(t *testing.T) {
	t.Parallel()
	var w Walker
	if root := w.Document([]byte("a: 1\nb: *nope\n"), ""); root != nil {
		t.Fatal("a document with an unknown alias parsed")
	}
	ps := w.Problems()
	if len(ps) != 1 || ps[0].Line != 2 || ps[0].Column == 0 || !strings.HasPrefix(ps[0].What, "invalid YAML: ") {
		t.Fatalf("problems %+v", ps)
	}
}
