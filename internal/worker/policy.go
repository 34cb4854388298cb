package worker

import (
	"math/rand/v2"
	"time"

	backoffpkg "github.com/herald-dev/herald/internal/backoff"
)

// backoff is exponential with full jitter: uniform in [base/2, min(cap, base*2^n)].
func backoff(n int, base, cap time.Duration) time.Duration {
	d := backoffpkg.Exp(base, cap, n)
	lo := base / 2
	if d <= lo {
		return d
	}
	return lo + rand.N(d-lo)
}
