package yamlstrict

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Document parses data as a single YAML document and returns its root
// node, or nil after reporting why there is none: a syntax error, a second
// document, or no content at all (a file that is empty or holds only
// comments). emptyFix tells the author what the file should hold, such as
// "add a routes: list".
//
// Nothing is resolved: anchors and aliases stay as written, to be refused
// by the accessors, and no Go value is built.
func (w *Walker) Document(data []byte, emptyFix string) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			w.ReportAt(1, 1, "", "the file is empty", emptyFix)
		} else {
			w.syntax(err)
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			w.syntax(err)
		} else {
			w.Report(&next, "", "a second YAML document starts here", "remove the '---' separator and what follows it: the file holds one document")
		}
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		w.Report(&doc, "", "the file holds no YAML document", emptyFix)
		return nil
	}
	root := doc.Content[0]
	if isNull(root) {
		w.Report(root, "", "the file is empty", emptyFix)
		return nil
	}
	return root
}

// positionRE finds a position in the text of a YAML error that is not a
// *yaml.LoadError.
var positionRE = regexp.MustCompile(`line (\d+)(?:, column (\d+))?`)

// syntax reports a YAML syntax error where the parser found it.
func (w *Walker) syntax(err error) {
	const fix = "check the indentation, quotes and brackets at this point"
	var le *yaml.LoadError
	if errors.As(err, &le) {
		what := "invalid YAML: " + le.Message
		if le.ContextMsg != "" {
			what += " (" + le.ContextMsg + ")"
		}
		w.ReportAt(le.Mark.Line, le.Mark.Column, "", what, fix)
		return
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line, col int
	if m := positionRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		col, _ = strconv.Atoi(m[2])
	}
	w.ReportAt(line, col, "", "invalid YAML: "+msg, fix)
}
