package alerts

import (
	"fmt"
	"strings"
)

// Problem is one mistake in a routing file, at a line and column (1-based;
// 0 when the YAML parser could not tell).
type Problem struct {
	Line    int
	Column  int
	Message string
}

// RoutesError lists every problem found in a routing file, each naming the
// file, line and column and saying how to fix it.
type RoutesError struct {
	// File is the name the routing file was parsed under.
	File string
	// Problems are in file order.
	Problems []Problem
}

// Error prints one problem per line as file:line:column: message.
func (e *RoutesError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
			if p.Column > 0 {
				fmt.Fprintf(&b, ":%d", p.Column)
			}
		}
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}
