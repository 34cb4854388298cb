package worker

import (
	"math/rand/v2"
	"time"
)

// backoff is exponential with full jitter: uniform in [base/2, min(cap, base*2^n)].
func backoff(n int, base, cap time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < cap; i++ {
		d *= 2
	}
	if d > cap {
		d = cap
	}
	lo := base / 2
	if d <= lo {
		return d
	}
	return lo + rand.N(d-lo)
}
