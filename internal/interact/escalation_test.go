package interact

import (
	"regexp"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/callbacks"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// Acknowledging an escalated alert stops its escalation, and the edit
// says how long after the firing it came.
func TestAcknowledgeStopsEscalation(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	s := subject("pages", "alert/k-esc/db")
	s.Fired = time.Now().Add(-3 * time.Minute)
	st := escalation.NewStore(h.rdb, nil)
	if ok, err := st.Begin(h.ctx, escalation.Start{Bot: "pages", Route: "db", Identity: "k-esc", Policy: "p",
		Homes: []escalation.Home{{Chat: testChat, Thread: s.ThreadKey}}, Alert: escalation.Subject{Title: "disk full"},
		FiredAt: s.Fired.Add(-time.Minute)}); !ok || err != nil {
		t.Fatalf("Begin = %v, %v", ok, err)
	}
	msg := h.sendAlert(t, s)
	h.press(t, msg, alice, callbacks.Ack)
	cur := h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })
	// The escalation's record knows the firing time (4 minutes ago) and
	// wins over the subject's.
	if !regexp.MustCompile(`✅ Acknowledged by @alice at \d\d:\d\d UTC, 4m after firing`).MatchString(cur.Text) {
		t.Errorf("edited text %q", cur.Text)
	}
	rec, err := h.rdb.HGetAll(h.ctx, keys.Escalation(escalationID(t, h, s))).Result()
	if err != nil || rec["state"] != "acked" || rec["acked_by"] != "@alice" {
		t.Errorf("escalation record %v, %v; want acknowledged by @alice", rec, err)
	}
}

// escalationID is the id of the escalation whose home is s's thread.
func escalationID(t *testing.T, h *harness, s callbacks.Subject) string {
	t.Helper()
	id, err := h.rdb.Get(h.ctx, keys.EscalationHome(s.Bot, s.Chat, s.ThreadKey)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Without an escalation the subject's firing time still shows.
func TestAcknowledgeSaysHowLongAfterFiring(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	s := subject("pages", "fp-fired")
	s.Fired = time.Now().Add(-90 * time.Minute)
	msg := h.sendAlert(t, s)
	h.press(t, msg, alice, callbacks.Ack)
	cur := h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })
	if !regexp.MustCompile(`, 1h 30m after firing$`).MatchString(cur.Text) {
		t.Errorf("edited text %q", cur.Text)
	}
}
