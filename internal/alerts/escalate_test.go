package alerts

import (
	"context"
	"sync"
	"testing"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/escalation"
)

// escalator records what the router asks of it.
type escalator struct {
	mu     sync.Mutex
	begun  []escalation.Start
	ended  []escalation.Stop
	failed error
}

func (e *escalator) Begin(_ context.Context, st escalation.Start) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.begun = append(e.begun, st)
	return true, e.failed
}

func (e *escalator) Resolve(_ context.Context, st escalation.Stop) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = append(e.ended, st)
	return e.failed
}

const escalationTable = `
escalation_policies:
  - {name: p, steps: [{notify: {user: {id: 7, name: Ann}}}]}
routes:
  - name: db
    match: {labels: {team: db}}
    escalation: p
    buttons: [ack]
    destinations: [1, {chat: 2, thread: 9}]
  - name: quiet
    match: {labels: {team: db}}
    destinations: [3]
`

// A firing alert of an escalated route begins one escalation, whose homes
// are its messages in every destination, with their threads and the
// reference of their buttons; a route without a policy begins none; the
// resolution ends it.
func TestRouterBeginsAndEndsEscalations(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	r := threadRouter(t, escalationTable, b.enq, b.rdb)
	esc := &escalator{}
	r.cfg.Escalations = esc
	ctx := context.Background()
	a := Alert{Title: "disk full", Severity: SeverityCritical, Source: "am", Key: "k1", Labels: map[string]string{"team": "db"}}
	if _, err := r.Dispatch(ctx, []Alert{a}); err != nil {
		t.Fatal(err)
	}
	if len(esc.begun) != 1 {
		t.Fatalf("began %d escalations, want 1", len(esc.begun))
	}
	st := esc.begun[0]
	if st.Policy != "p" || st.Route != "db" || st.Alert.Title != "disk full" || st.Alert.Severity != "critical" || !st.FiredAt.Equal(testNow) || st.Identity != a.Identity() {
		t.Errorf("Start = %+v", st)
	}
	want := []escalation.Home{{Chat: "1", Thread: "alert/k1/db"}, {Chat: "2", Topic: 9, Thread: "alert/k1/db/9"}}
	for i, h := range st.Homes {
		if i >= len(want) {
			break
		}
		subj, err := buttons.Load(ctx, b.rdb, "", h.Ref)
		if err != nil || subj.Chat != h.Chat || subj.ThreadKey != h.Thread {
			t.Errorf("home %d: the buttons' reference %q names %+v (%v), want the home's message's", i, h.Ref, subj, err)
		}
		want[i].Ref = h.Ref
	}
	if len(st.Homes) != 2 || st.Homes[0] != want[0] || st.Homes[1] != want[1] {
		t.Errorf("homes %+v, want %+v", st.Homes, want)
	}
	a.Status = StatusResolved
	if _, err := r.Dispatch(ctx, []Alert{a}); err != nil {
		t.Fatal(err)
	}
	if len(esc.ended) != 1 || esc.ended[0].Identity != st.Identity || len(esc.ended[0].Homes) != 2 {
		t.Errorf("ended %+v", esc.ended)
	}
}
