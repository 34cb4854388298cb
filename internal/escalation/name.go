package escalation

import "regexp"

// namePattern is the syntax of policy names: they appear in routes,
// metrics' labels and Redis records.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
