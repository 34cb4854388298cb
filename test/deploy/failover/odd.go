package main

import (
	"context"
	"fmt"
	"time"
)

// odd lists the requests the summary counts against the run: accepted and
// not delivered (yet), refused or cut off (code 0: no answer within the
// client's 5 s) and delivered all the same, delivered more than once. Each
// line gives the post's time, its answer and its delivery, so it can be
// set beside the kills and the services' logs.
func (t *traffic) odd() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, r := range t.reqs {
		if !r.answered {
			continue
		}
		what := ""
		switch {
		case r.code == 202 && r.deliveries == 0:
			what = "accepted, not delivered"
		case r.code != 202 && r.deliveries > 0:
			what = "refused, delivered"
		case r.deliveries > 1:
			what = "delivered twice"
		default:
			continue
		}
		seen := "never"
		if r.deliveries > 0 {
			seen = fmt.Sprintf("%.1f s after the post", r.seen.Sub(r.sent).Seconds())
		}
		lines = append(lines, fmt.Sprintf("%s: %s posted %s, answered %d after %.1f s, delivered %d time(s), first %s",
			what, r.text, r.sent.UTC().Format("15:04:05.000"), r.code, r.done.Sub(r.sent).Seconds(), r.deliveries, seen))
	}
	return lines
}

// lost reports how many accepted messages were not delivered yet.
func (t *traffic) lost() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, r := range t.reqs {
		if r.answered && r.code == 202 && r.deliveries == 0 {
			n++
		}
	}
	return n
}

// waitLate watches up to late more for accepted messages still missing
// after the drain (a task active on a killed master comes back only
// through asynq's lease recovery and a retry) and says how long it took.
func (t *traffic) waitLate(ctx context.Context, late time.Duration) string {
	start := time.Now()
	for t.lost() > 0 && time.Since(start) < late {
		if err := sleep(ctx, time.Second); err != nil {
			break
		}
	}
	if n := t.lost(); n > 0 {
		return fmt.Sprintf("after the drain: %d accepted message(s) still not delivered %.0f s later", n, time.Since(start).Seconds())
	}
	return fmt.Sprintf("after the drain: every accepted message delivered (waited %.1f s more)", time.Since(start).Seconds())
}
