package escalation

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// The escalation lease is a setting, checked against its bounds and the
// check interval; its default is DefaultLease.
func TestLeaseSetting(t *testing.T) {
	if got := (Settings{}).WithDefaults().Lease; got != DefaultLease {
		t.Fatalf("default lease %v, want %v", got, DefaultLease)
	}
	for _, tc := range []struct {
		lease, check time.Duration
		bad          bool
	}{
		{DefaultLease, time.Second, false},
		{5 * time.Second, time.Second, false},
		{4 * time.Second, time.Second, true},
		{11 * time.Minute, time.Second, true},
		{10 * time.Second, 5 * time.Second, true},
	} {
		var p config.Problems
		Settings{CheckInterval: tc.check, Lease: tc.lease}.Check(&p)
		err := p.Err()
		if (err != nil) != tc.bad || err != nil && !strings.Contains(err.Error(), EnvLease) {
			t.Errorf("lease %v with checks every %v: %v (bad=%v)", tc.lease, tc.check, err, tc.bad)
		}
	}
}
