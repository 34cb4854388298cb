package yamlstrict

import "strings"

// Error is every problem found in one file.
type Error struct {
	// File names the file, normally its path; it may be empty.
	File string
	// Problems are in file order.
	Problems []Problem
}

// Error prints one problem per line, each in the form of Problem.Format.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Format(e.File))
	}
	return b.String()
}
