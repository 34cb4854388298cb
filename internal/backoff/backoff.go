// Package backoff computes the waits between retries: a base wait doubled
// for each further failure, up to a cap. Callers add jitter, or a floor,
// of their own.
package backoff

import "time"

// Exp is base doubled n times, at most ceiling: min(base·2ⁿ, ceiling),
// without overflowing however large n is. A negative n counts as 0, and a
// base that is not positive is returned as it is (capped).
func Exp(base, ceiling time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d > 0 && d < ceiling; i++ {
		if d > ceiling/2 {
			return ceiling
		}
		d *= 2
	}
	return min(d, ceiling)
}
