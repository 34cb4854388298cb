package yamlstrict

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v4"
)

// maxProblems bounds the problems Walker.Problems returns: past it, a last
// problem says how many more there were. A file with that many mistakes is
// usually not the file its author meant to load.
const maxProblems = 50

// Walker records the problems found while a file's node tree is walked.
// The zero value is ready to use. A Walker is not safe for concurrent use.
type Walker struct {
	problems []Problem
}

// Report records a problem at node n (at no position when n is nil).
func (w *Walker) Report(n *yaml.Node, path, what, fix string) {
	p := Problem{Path: path, What: what, Fix: fix}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	w.problems = append(w.problems, p)
}

// ReportAt records a problem at a position the caller worked out, such as
// a line inside a multi-line value.
func (w *Walker) ReportAt(line, column int, path, what, fix string) {
	w.problems = append(w.problems, Problem{Line: line, Column: column, Path: path, What: what, Fix: fix})
}

// Failed reports whether any problem was recorded.
func (w *Walker) Failed() bool { return len(w.problems) > 0 }

// Problems returns the problems recorded so far in file order, each
// reported once (the same mistake reached along two paths of the walk
// counts once), at most maxProblems of them plus a note on the rest.
func (w *Walker) Problems() []Problem {
	out := slices.Clone(w.problems)
	slices.SortStableFunc(out, func(a, b Problem) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	out = slices.Compact(out)
	if len(out) > maxProblems {
		rest := len(out) - maxProblems
		out = append(out[:maxProblems], Problem{
			What: fmt.Sprintf("and %d more problems", rest),
			Fix:  "fix the ones above first",
		})
	}
	return out
}

// Err returns the problems recorded so far as an *Error naming file, or
// nil when there are none.
func (w *Walker) Err(file string) error {
	if !w.Failed() {
		return nil
	}
	return &Error{File: file, Problems: w.Problems()}
}
