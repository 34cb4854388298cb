package alerts

import "github.com/herald-dev/herald/internal/yamlstrict"

// problem is one mistake in a routing file: its line and column (1-based;
// 0 when the YAML parser could not tell), the setting at fault, what is
// wrong and the fix. It is the problem of every configuration file.
type problem = yamlstrict.Problem

// routesError lists every problem found in a routing file, each naming the
// file, line and column and saying how to fix it.
type routesError struct {
	// File is the name the routing file was parsed under.
	File string
	// Problems are in file order.
	Problems []problem
}

// Error prints one problem per line as file:line:column: path: what; fix.
func (e *routesError) Error() string {
	return (&yamlstrict.Error{File: e.File, Problems: e.Problems}).Error()
}
