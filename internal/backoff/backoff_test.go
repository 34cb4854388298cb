package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/backoff"
)

func TestExp(t *testing.T) {
	t.Parallel()
	s := time.Second
	for _, tc := range []struct {
		base, ceiling time.Duration
		n             int
		want          time.Duration
	}{
		{s, time.Minute, 0, s},
		{s, time.Minute, -3, s},
		{s, time.Minute, 1, 2 * s},
		{s, time.Minute, 5, 32 * s},
		{s, time.Minute, 6, time.Minute},
		{s, time.Minute, 1 << 30, time.Minute},
		{time.Minute, s, 0, s},
		{s, math.MaxInt64, 100, math.MaxInt64},
		{0, time.Minute, 10, 0},
		{3 * s, 10 * s, 2, 10 * s},
	} {
		if got := backoff.Exp(tc.base, tc.ceiling, tc.n); got != tc.want {
			t.Errorf("Exp(%v, %v, %d) = %v, want %v", tc.base, tc.ceiling, tc.n, got, tc.want)
		}
	}
}
