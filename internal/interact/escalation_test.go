package interact

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/jobs"
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
	h.press(t, msg, alice, buttons.Ack)
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
func escalationID(t *testing.T, h *harness, s buttons.Subject) string {
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
	h.press(t, msg, alice, buttons.Ack)
	cur := h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })
	if !regexp.MustCompile(`, 1h 30m after firing$`).MatchString(cur.Text) {
		t.Errorf("edited text %q", cur.Text)
	}
}

// dmCopy sends the buttons of the alert message msg to user's private
// chat, as an escalation's direct message does, and returns the DM as the
// fake holds it. allow records that the user may press them there.
func dmCopy(t *testing.T, h *harness, s buttons.Subject, msg telegramfake.Message, user telegramfake.User, allow bool) telegramfake.Message {
	t.Helper()
	_, ref, _ := buttons.ParseData(msg.ReplyMarkup.InlineKeyboard[0][0].CallbackData)
	if allow {
		if err := buttons.AllowDirect(h.ctx, h.rdb, s.Bot, ref, user.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	chat := strconv.FormatInt(user.ID, 10)
	text := "🚨 Escalated to you: disk full (" + chat + ")"
	if _, err := h.edits.Enqueue(h.ctx, jobs.Request{Message: jobs.SendMessage{Bot: s.Bot, Chat: chat, Text: text,
		Buttons: buttons.Buttons(s, ref)}}); err != nil {
		t.Fatal(err)
	}
	var dm telegramfake.Message
	h.waitFor(t, "the DM", func() bool {
		for _, m := range h.fake.MessagesOf(s.Bot) {
			if m.Text == text {
				dm = m
				return true
			}
		}
		return false
	})
	return dm
}

// The buttons an escalation sends a person by direct message act on the
// alert's message: an acknowledgement pressed there stops the escalation
// and edits the alert's message in its group (who, how long after
// firing); the DM itself stays as it is. The same buttons in the DM of
// someone the escalation did not message are refused.
func TestAcknowledgeFromADirectMessage(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	s := subject("pages", "alert/k-dm/db")
	s.Chat, s.Allowed = "-1005000", []string{"@carol"} // only Carol may press in the group
	s.Fired = time.Now().Add(-2 * time.Minute)
	st := escalation.NewStore(h.rdb, nil)
	if ok, err := st.Begin(h.ctx, escalation.Start{Bot: "pages", Route: "db", Identity: "k-dm", Policy: "p",
		Homes: []escalation.Home{{Chat: s.Chat, Thread: s.ThreadKey}}, Alert: escalation.Subject{Title: "disk full"},
		FiredAt: s.Fired}); !ok || err != nil {
		t.Fatalf("Begin = %v, %v", ok, err)
	}
	msg := h.sendAlert(t, s)
	stranger := dmCopy(t, h, s, msg, bob, false)
	q := h.press(t, stranger, bob, buttons.Ack)
	if a := h.answered(t, "pages", q.ID); a.Answer.Text != answerRefused {
		t.Errorf("a press in a DM the escalation did not send answered %q, want %q", a.Answer.Text, answerRefused)
	}
	dm := dmCopy(t, h, s, msg, alice, true)
	q = h.press(t, dm, alice, buttons.Ack)
	if a := h.answered(t, "pages", q.ID); a.Answer.Text != answerAcknowledged {
		t.Errorf("the press in Alice's DM answered %q, want %q", a.Answer.Text, answerAcknowledged)
	}
	cur := h.current(t, msg, "the acknowledgement on the alert's message", func(e telegramfake.Edit) bool {
		return hasLine(e.Text, "Acknowledged by @alice")
	})
	if !regexp.MustCompile(`✅ Acknowledged by @alice at \d\d:\d\d UTC, 2m after firing`).MatchString(cur.Text) {
		t.Errorf("edited text %q", cur.Text)
	}
	if acts := keyboardActions(cur); slices.Contains(acts, buttons.Ack) || len(acts) != 2 {
		t.Errorf("the alert's message keeps the buttons %v, want the silences only", acts)
	}
	rec, err := h.rdb.HGetAll(h.ctx, keys.Escalation(escalationID(t, h, s))).Result()
	if err != nil || rec["state"] != "acked" || rec["acked_by"] != "@alice" {
		t.Errorf("escalation record %v, %v; want acknowledged by @alice", rec, err)
	}
	if m, _ := h.fake.Lookup(dm.ChatID, dm.MessageID); m.Edited != 0 {
		t.Errorf("the DM was edited: %q", m.Current().Text)
	}
}
