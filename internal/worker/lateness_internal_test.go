package worker

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLatenessNeverUsesASlotLaterThanTheGuardUntilForced: with a 20 ms
// guard a send gives up slots it reaches more than 10 ms late; after two it
// may use up to 15 ms (never past the guard, which is what the sends
// reserved after it count on), and only after eight does it go however
// late, saying so once.
func TestLatenessNeverUsesASlotLaterThanTheGuardUntilForced(t *testing.T) {
	var logs bytes.Buffer
	h := &handler{metrics: newMetrics(prometheus.NewRegistry()), log: slog.New(slog.NewTextHandler(&logs, nil))}
	d := &delivery{}
	lt := lateness{h: h, d: d, late: 10 * time.Millisecond}
	due := time.Unix(1000, 0)
	steps := []struct {
		late    time.Duration
		tooLate bool
		by      time.Duration // after due; -1: no bound
	}{
		{5 * time.Millisecond, false, 10 * time.Millisecond},
		{12 * time.Millisecond, true, 0},
		{12 * time.Millisecond, true, 0},
		// Two given up: up to 15 ms.
		{12 * time.Millisecond, false, 15 * time.Millisecond},
		{25 * time.Millisecond, true, 0},
		{25 * time.Millisecond, true, 0},
		{25 * time.Millisecond, true, 0},
		{25 * time.Millisecond, true, 0},
		{25 * time.Millisecond, true, 0},
		{25 * time.Millisecond, true, 0},
		// Eight given up: it goes, without a bound.
		{25 * time.Millisecond, false, -1},
		{40 * time.Millisecond, false, -1},
	}
	for i, s := range steps {
		if got := lt.tooLate(s.late); got != s.tooLate {
			t.Fatalf("step %d (%v late, %d given up): tooLate %v, want %v", i, s.late, d.lates, got, s.tooLate)
		}
		if s.tooLate {
			continue
		}
		by := lt.by(due)
		switch {
		case s.by < 0 && !by.IsZero():
			t.Fatalf("step %d: send by %v, want no bound", i, by.Sub(due))
		case s.by >= 0 && by.Sub(due) != s.by:
			t.Fatalf("step %d: send by %v after its slot, want %v", i, by.Sub(due), s.by)
		}
	}
	if n := strings.Count(logs.String(), "raise HERALD_LIMIT_GUARD"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
}
