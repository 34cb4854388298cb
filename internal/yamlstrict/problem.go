package yamlstrict

import (
	"strconv"
	"strings"
)

// Problem is one mistake found in a file.
type Problem struct {
	// Line and Column locate the mistake, 1-based; 0 when unknown.
	Line   int
	Column int
	// Path names the setting at fault, such as "feeds[2].url"; it is empty
	// for a problem with the file as a whole.
	Path string
	// What says what is wrong, without the path.
	What string
	// Fix says what to write instead; it may be empty when What says it
	// all.
	Fix string
}

// Message is the problem without its position: "path: what; fix".
func (p Problem) Message() string {
	var b strings.Builder
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Detail())
	return b.String()
}

// Detail is the problem without its position and path: "what; fix".
func (p Problem) Detail() string {
	if p.Fix == "" {
		return p.What
	}
	return p.What + "; " + p.Fix
}

// Format prints the problem as "file:line:column: path: what; fix",
// leaving out the parts that are unknown (an empty file name, a zero line
// or column).
func (p Problem) Format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if p.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Message())
	return b.String()
}

// less orders problems by position; problems without one come first.
func (p Problem) less(q Problem) bool {
	return p.Line < q.Line || p.Line == q.Line && p.Column < q.Column
}
