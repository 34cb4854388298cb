package broker

import (
	"context"
	"math/rand/v2"
	"time"
)

// every calls fn every interval, ±20% so that a fleet's workers drift apart
// instead of acting in lockstep, until ctx ends.
func every(ctx context.Context, interval time.Duration, fn func()) {
	for {
		t := time.NewTimer(interval + time.Duration((rand.Float64()*0.4-0.2)*float64(interval)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			fn()
		}
	}
}
