package escalation

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A policy's first step DM to a person in a while goes on the critical
// queue, which takes the first waiting turn of the person's chat from
// the other queues' messages; its further DMs to the person within
// DMFloodWindow go on the default queue, in order. Another policy's
// first DM to the same person, amid the flood, is critical again, and so
// comes next in the person's chat. Whatever the alert's severity.
func TestEngineFloodDMsQueueBehindAnotherPolicysFirst(t *testing.T) {
	flood := Policy{Name: "flood", Steps: []Step{{Targets: []Target{{Schedule: "primary"}}, Wait: time.Minute}}}
	other := Policy{Name: "other", Steps: []Step{{Targets: []Target{{Schedule: "primary"}}, Wait: time.Minute}}}
	r := newRig(t, flood)
	r.cat.Policies["other"] = other
	e := r.engine(nil)
	e.cfg.DMWindow = 300 * time.Millisecond
	for i := range 5 {
		r.start(fmt.Sprint("f", i), "flood")
	}
	r.check(e)
	r.clock.add(time.Second)
	st := Start{Route: "other", Identity: "alert-o", Policy: "other",
		Homes: []Home{{Chat: homeChat, Thread: "alert/alert-o/other"}}, Alert: Subject{Title: "disk full o", Severity: "warning"}, FiredAt: r.clock.time()}
	if ok, err := r.store.Begin(t.Context(), st); !ok || err != nil {
		t.Fatalf("Begin = %v, %v", ok, err)
	}
	r.check(e)

	queues := func() (got []string) {
		for _, m := range r.out.sent() {
			if m.Chat == "1001" {
				title := strings.TrimPrefix(strings.SplitN(m.Text, "\n", 2)[0], "🚨 Escalated to you: ")
				got = append(got, title+"="+r.out.queue[m.IdempotencyKey])
			}
		}
		return got
	}
	// The flood's escalations are claimed in no particular order: the
	// first DM taken is critical, the others default, then the other
	// policy's is critical.
	got := queues()
	ok := len(got) == 6 && strings.HasSuffix(got[0], "=critical") && got[5] == "disk full o=critical"
	for _, q := range got[1:min(5, len(got))] {
		ok = ok && strings.HasSuffix(q, "=default")
	}
	if !ok {
		t.Fatalf("the DMs to Alice went on %q; want the flood's first on critical, its 4 others on default, then the other policy's on critical", got)
	}
	// A window after the flood's last DM, its next one is first again.
	r.clock.add(time.Second)
	time.Sleep(2 * e.cfg.DMWindow) // the window runs on Redis's own clock
	r.start("f9", "flood")
	r.check(e)
	if got := queues(); got[len(got)-1] != "disk full f9=critical" {
		t.Fatalf("after a quiet window the flood's next DM went on %q, want the critical queue", got[len(got)-1])
	}
}
