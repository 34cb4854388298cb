package background

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jitter returns d ± 20%, so that processes started together drift apart
// instead of acting in lockstep.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d - d/5 + rand.N(2*d/5+1)
}

// Every calls fn after first, then every Jitter(interval) after the end of
// the call before, until ctx ends. A call under way when ctx ends is not
// interrupted by Every; fn decides on which context its pass runs.
func Every(ctx context.Context, first, interval time.Duration, fn func()) {
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		fn()
		timer.Reset(Jitter(interval))
	}
}
