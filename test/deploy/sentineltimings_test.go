package deploy

import (
	"strconv"
	"testing"
)

// Bounds of the sentinels' timings in the replicated layer (issue 40: a
// master kill answered again within 5 s).
const (
	// maxDownAfterMS: a sentinel takes the master for dead after this long
	// without an answer. The failover after it (vote, SLAVEOF NO ONE, the
	// promotion seen at the next 1 s INFO of the failover, the other
	// replica re-pointed) takes about 2 s more, so 1 s of detection leaves
	// the producer room inside 5 s.
	maxDownAfterMS = 1000
	// minFailoverTimeoutMS: the promotion is seen at the leader's next
	// INFO (every second during a failover); three of those must fit
	// before the leader gives the failover up.
	minFailoverTimeoutMS = 3000
	// maxFailoverTimeoutMS: a failover that stalls (its leader stops, or
	// the promotion is not seen) is started again, by any sentinel that
	// voted, only 2 x failover-timeout after the vote; this bounds that
	// wait to 10 s.
	maxFailoverTimeoutMS = 5000
)

// TestReplicatedSentinelTimings: the three sentinels run the same quorum
// and timings, and the timings keep a failover inside the bounds above.
func TestReplicatedSentinelTimings(t *testing.T) {
	t.Parallel()
	p := loadReplicated(t)
	first := rawEnv(service(t, p, sentinelSvcs[0]))
	for _, sn := range sentinelSvcs {
		env := rawEnv(service(t, p, sn))
		for _, k := range []string{"QUORUM", "DOWN_AFTER_MS", "FAILOVER_TIMEOUT_MS"} {
			if env(k) != first(k) {
				t.Errorf("%s %s = %q, %s has %q; the sentinels must agree", sn, k, env(k), sentinelSvcs[0], first(k))
			}
		}
		if got := env("QUORUM"); got != "2" {
			t.Errorf("%s QUORUM = %q, want 2 of the 3 sentinels", sn, got)
		}
		down, err := strconv.Atoi(env("DOWN_AFTER_MS"))
		if err != nil || down <= 0 || down > maxDownAfterMS {
			t.Errorf("%s DOWN_AFTER_MS = %q, want 1 to %d", sn, env("DOWN_AFTER_MS"), maxDownAfterMS)
		}
		ft, err := strconv.Atoi(env("FAILOVER_TIMEOUT_MS"))
		if err != nil || ft < minFailoverTimeoutMS || ft > maxFailoverTimeoutMS {
			t.Errorf("%s FAILOVER_TIMEOUT_MS = %q, want %d to %d", sn, env("FAILOVER_TIMEOUT_MS"), minFailoverTimeoutMS, maxFailoverTimeoutMS)
		}
	}
}
