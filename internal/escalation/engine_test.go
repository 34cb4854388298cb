package escalation

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
)

// An alert nobody acknowledges goes through the three steps, each once and
// each after the one before has waited; then the escalation ends.
func TestEngineThreeSteps(t *testing.T) {
	r := newRig(t, threePolicy())
	m := NewMetrics(nil)
	e := r.engine(m)
	r.start("1", "db-critical")

	r.check(e)
	notes := r.out.to(homeChat)
	if len(notes) != 1 || !strings.Contains(notes[0], "escalated to chat "+homeChat+", step 1 of 3") {
		t.Fatalf("after step 1 the thread has %q", notes)
	}
	if n := len(r.out.sent()); n != 1 {
		t.Fatalf("step 1 on the alert's own chat sent %d messages, want its note only", n)
	}
	r.clock.add(time.Minute)
	if n := r.check(e); n != 0 {
		t.Fatalf("a check within step 1's wait moved %d escalations", n)
	}
	r.clock.add(time.Minute)
	r.check(e)
	dm := r.out.to("1001")
	if len(dm) != 1 || !strings.Contains(dm[0], "Escalated to you: disk full 1") || !strings.Contains(dm[0], "step 2 of 3") {
		t.Fatalf("Alice (on call) got %q", dm)
	}
	if notes := r.out.to(homeChat); len(notes) != 2 || !strings.Contains(notes[1], "escalated to @alice (on call in primary), step 2 of 3") {
		t.Fatalf("after step 2 the thread has %q", notes)
	}
	r.clock.add(4 * time.Minute)
	r.check(e)
	if dm := r.out.to("1003"); len(dm) != 1 || !strings.Contains(dm[0], "step 3 of 3") {
		t.Fatalf("Carol got %q", dm)
	}
	r.clock.add(10 * time.Minute)
	r.check(e)
	notes = r.out.to(homeChat)
	if len(notes) != 4 || !strings.Contains(notes[3], "Escalation ended: nobody acknowledged after 3 steps") {
		t.Fatalf("at the end the thread has %q", notes)
	}
	r.clock.add(time.Hour)
	if n := r.check(e); n != 0 || len(r.out.sent()) != 6 {
		t.Fatalf("an ended escalation moved (%d) or sent more (%d messages)", n, len(r.out.sent()))
	}
	for step, want := range map[string]float64{"1": 1, "2": 1, "3": 1} {
		if got := counter(t, m.Steps.WithLabelValues("db-critical", step)); got != want {
			t.Errorf("herald_escalations_total{step=%q} = %v, want %v", step, got, want)
		}
	}
	for _, msg := range r.out.sent() {
		if msg.Chat == homeChat && (msg.Thread == nil || msg.Thread.Mode != jobs.ThreadReply || msg.Thread.Key != "alert/alert-1/db" || !msg.DisableNotification) {
			t.Errorf("a note is not a silent reply in the alert's thread: %+v", msg)
		}
	}
}

// An alert acknowledged during step 1 gets no step 2; the acknowledgement
// is observed once, with the time since it fired.
func TestEngineAcknowledgedStops(t *testing.T) {
	r := newRig(t, threePolicy())
	m := NewMetrics(nil)
	e := r.engine(m)
	st := r.start("1", "db-critical")
	r.check(e)
	r.clock.add(90 * time.Second)
	st2 := NewStore(r.rdb, m)
	a, err := st2.Acknowledge(context.Background(), Ack{Bot: st.Bot, Chat: homeChat, Thread: st.Homes[0].Thread, By: "@bob_ops", At: r.clock.time()})
	if err != nil || !a.Escalated || !a.First || !a.FiredAt.Equal(st.FiredAt) || a.Policy != "db-critical" {
		t.Fatalf("Acknowledge = %+v, %v", a, err)
	}
	again, err := st2.Acknowledge(context.Background(), Ack{Bot: st.Bot, Chat: homeChat, Thread: st.Homes[0].Thread, By: "@alice", At: r.clock.time()})
	if err != nil || !again.Escalated || again.First {
		t.Fatalf("second Acknowledge = %+v, %v", again, err)
	}
	if n, sum := observed(t, m.TimeToAck.WithLabelValues("db-critical")); n != 1 || sum != 90 {
		t.Fatalf("time to acknowledge: %d observations summing to %vs, want one of 90s", n, sum)
	}
	r.clock.add(time.Hour)
	r.check(e)
	if n := len(r.out.sent()); n != 1 {
		t.Fatalf("after the acknowledgement %d messages, want step 1's note only: %q", n, r.out.to("1001"))
	}
	none, err := st2.Acknowledge(context.Background(), Ack{Chat: homeChat, Thread: "alert/other/db", By: "x", At: r.clock.time()})
	if err != nil || none.Escalated {
		t.Fatalf("acknowledging a message of no escalation = %+v, %v", none, err)
	}
}

// A step whose every message failed (a user who never started the bot)
// shows why in the thread and moves on at once, without waiting.
func TestEngineFailedStepMovesOn(t *testing.T) {
	r := newRig(t, threePolicy())
	e := r.engine(nil)
	r.start("1", "db-critical")
	r.check(e)
	r.clock.add(2 * time.Minute)
	r.check(e) // step 2: Alice's DM
	var task string
	for _, m := range r.out.sent() {
		if m.Chat == "1001" {
			task = jobs.IdempotencyID("", m.IdempotencyKey)
		}
	}
	r.clock.add(time.Second)
	r.check(e)
	if len(r.out.to("1003")) != 0 {
		t.Fatal("step 3 came while step 2's message was not settled")
	}
	r.dl.set(task, Outcome{Settled: true, Failed: true, Reason: "forbidden"})
	r.clock.add(5 * time.Second) // the next look, well within step 2's 4 minutes
	r.check(e)
	notes := r.out.to(homeChat)
	if len(notes) != 4 || !strings.Contains(notes[2], "Could not reach @alice (on call in primary): the bot may not message them") ||
		!strings.Contains(notes[2], "the next one follows now") || !strings.Contains(notes[3], "step 3 of 3") {
		t.Fatalf("the thread has %q", notes)
	}
	if dm := r.out.to("1003"); len(dm) != 1 {
		t.Fatalf("Carol got %d messages at once, want step 3's", len(dm))
	}
}

// A DM to someone who blocked the bot fails as the worker archives a
// message to any chat that blocked it (ledger.ReasonChatBlocked); the
// thread says the person blocked the bot, not that the bot left a chat.
func TestEngineBlockedDMSaysTheUserBlockedTheBot(t *testing.T) {
	r := newRig(t, threePolicy())
	e := r.engine(nil)
	r.start("1", "db-critical")
	r.check(e)
	r.clock.add(2 * time.Minute)
	r.check(e) // step 2: Alice's DM
	var task string
	for _, m := range r.out.sent() {
		if m.Chat == "1001" {
			task = jobs.IdempotencyID("", m.IdempotencyKey)
		}
	}
	r.dl.set(task, Outcome{Settled: true, Failed: true, Reason: "chat_blocked"}) // ledger.ReasonChatBlocked
	r.clock.add(5 * time.Second)
	r.check(e)
	notes := r.out.to(homeChat)
	if len(notes) < 3 || !strings.Contains(notes[2], "Could not reach @alice (on call in primary): they blocked the bot") ||
		strings.Contains(notes[2], "member of the chat") {
		t.Fatalf("the thread has %q", notes)
	}
}

// Nobody on call: the step says so and the next follows at once.
func TestEngineNobodyOnCall(t *testing.T) {
	pol := threePolicy()
	r := newRig(t, pol)
	s := r.schedules.Schedules["primary"]
	s.Layers[0].Start = time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC) // nobody until then
	r.schedules.Schedules["primary"] = s
	e := r.engine(nil)
	r.start("1", "db-critical")
	r.check(e)
	r.clock.add(2 * time.Minute)
	r.check(e)
	notes := r.out.to(homeChat)
	if len(notes) != 3 || !strings.Contains(notes[1], "nobody to escalate to, step 2 of 3") || !strings.Contains(notes[1], "nobody is on call in primary") {
		t.Fatalf("the thread has %q", notes)
	}
	if len(r.out.to("1003")) != 1 {
		t.Fatal("step 3 did not follow at once")
	}
}

// Several engines at once, and one that dies between sending a step and
// moving it on: every step of every alert is sent once.
func TestEngineExactlyOnce(t *testing.T) {
	pol := threePolicy()
	pol.Steps[0].Targets = append(pol.Steps[0].Targets, Target{User: bob})
	r := newRig(t, pol)
	engines := []*Engine{r.engine(nil), r.engine(nil), r.engine(nil)}
	const alerts = 20
	for i := 0; i < alerts; i++ {
		r.start(string(rune('a'+i)), "db-critical")
	}
	// The first enqueue of each of Bob's messages "crashes" its producer
	// after storing the message.
	var crashed sync.Map
	r.out.fail = func(m jobs.SendMessage) error {
		if _, again := crashed.LoadOrStore(m.IdempotencyKey, true); !again && m.Chat == "1002" {
			return errors.New("producer killed")
		}
		return nil
	}
	for round := 0; round < 40; round++ {
		var wg sync.WaitGroup
		for _, e := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = e.Check(context.Background())
			}()
		}
		wg.Wait()
		r.clock.add(31 * time.Second) // past a lease, so dead claims are taken over
	}
	sent := r.out.sent()
	for _, chat := range []string{"1002", "1001", "1003"} {
		if n := count(sent, chat, "Escalated to you"); n != alerts {
			t.Errorf("chat %s got %d notifications, want %d (one per alert)", chat, n, alerts)
		}
	}
	if n := count(sent, homeChat, "Escalation ended"); n != alerts {
		t.Errorf("%d escalations ended, want %d", n, alerts)
	}
}

// A resolution forgets the escalation: the alert's next firing escalates
// afresh, from step 1.
func TestEngineResolve(t *testing.T) {
	r := newRig(t, threePolicy())
	e := r.engine(nil)
	st := r.start("1", "db-critical")
	r.check(e)
	if again, err := r.store.Begin(context.Background(), st); err != nil || again {
		t.Fatalf("a repeat of the firing alert began again: %v, %v", again, err)
	}
	if err := r.store.Resolve(context.Background(), Stop{Bot: st.Bot, Route: st.Route, Identity: st.Identity, Homes: st.Homes}); err != nil {
		t.Fatal(err)
	}
	r.clock.add(time.Hour)
	if n := r.check(e); n != 0 || len(r.out.sent()) != 1 {
		t.Fatalf("a resolved escalation moved on")
	}
	r.start("1", "db-critical")
	r.check(e)
	if notes := r.out.to(homeChat); len(notes) != 2 || !strings.Contains(notes[1], "step 1 of 3") {
		t.Fatalf("the new firing's thread has %q", notes)
	}
}

// silencer catches every alert once set.
type silencer struct{ id string }

func (s *silencer) Silenced(context.Context, Subject) (string, error) { return s.id, nil }

// A silence stops the escalation at its next step, with a note.
func TestEngineSilenced(t *testing.T) {
	r := newRig(t, threePolicy())
	sil := &silencer{}
	e, err := NewEngine(Config{Redis: r.rdb, Messages: r.out, Catalog: func() Catalog { return r.cat }, Silences: sil, Logger: quiet, clock: r.clock.us})
	if err != nil {
		t.Fatal(err)
	}
	r.start("1", "db-critical")
	r.check(e)
	sil.id = "s-1"
	r.clock.add(2 * time.Minute)
	r.check(e)
	r.clock.add(time.Hour)
	r.check(e)
	notes := r.out.to(homeChat)
	if len(notes) != 2 || !strings.Contains(notes[1], "Escalation stopped: the alert is silenced (silence s-1)") || len(r.out.to("1001")) != 0 {
		t.Fatalf("the thread has %q", notes)
	}
}

// repeat takes the steps again; repeat_interval then re-notifies the last
// step's targets of a critical alert, every interval.
func TestEngineRepeats(t *testing.T) {
	pol := Policy{Name: "p", Repeat: 1, RepeatInterval: 30 * time.Minute, Steps: []Step{
		{Targets: []Target{{User: alice}}, Wait: time.Minute},
		{Targets: []Target{{User: carol}}, Wait: time.Minute},
	}}
	r := newRig(t, pol)
	e := r.engine(nil)
	r.start("1", "p")
	for i := 0; i < 4*60+5; i++ { // 4 minutes of steps, then two intervals
		r.check(e)
		r.clock.add(30 * time.Second)
	}
	if a, c := len(r.out.to("1001")), len(r.out.to("1003")); a != 2 || c != 2+3 {
		t.Fatalf("Alice got %d, Carol %d; want 2 and 2 + 3 re-notifications", a, c)
	}
	notes := r.out.to(homeChat)
	if !strings.Contains(notes[1], "step 2 of 2, round 1 of 2") || !strings.Contains(notes[4], "Still unacknowledged after") {
		t.Fatalf("the thread has %q", notes)
	}
}

// An acknowledgement that comes while a check takes a batch of steps (the
// batch was claimed and loaded before it) stops the escalation: a
// re-notification due in the same batch sends nothing, though the check
// had it in hand.
func TestEngineAcknowledgedDuringTheBatch(t *testing.T) {
	pol := Policy{Name: "p", RepeatInterval: 30 * time.Minute, Steps: []Step{{Targets: []Target{{User: alice}}, Wait: time.Minute}}}
	r := newRig(t, pol)
	e := r.engine(nil)
	starts := map[string]Start{"1": r.start("1", "p"), "2": r.start("2", "p")}
	r.check(e) // step 1: a DM each
	r.clock.add(time.Minute)
	r.check(e) // the re-notifications are due in 30 minutes
	r.clock.add(30 * time.Minute)
	// The first re-notification sent is the moment the other alert is
	// acknowledged.
	var once sync.Once
	acked := ""
	r.out.fail = func(m jobs.SendMessage) error {
		if m.Chat != "1001" || !strings.Contains(m.Text, "re-notification 1") {
			return nil
		}
		once.Do(func() {
			acked = map[bool]string{true: "2", false: "1"}[strings.Contains(m.Text, "disk full 1")]
			st := starts[acked]
			if _, err := r.store.Acknowledge(context.Background(), Ack{Bot: st.Bot, Chat: homeChat, Thread: st.Homes[0].Thread,
				By: "@bob_ops", At: r.clock.time()}); err != nil {
				t.Error(err)
			}
		})
		return nil
	}
	r.check(e)
	if acked == "" {
		t.Fatal("no re-notification was sent")
	}
	if n := count(r.out.sent(), "1001", "disk full "+acked+"\n"); n != 1 {
		t.Errorf("alert %s was acknowledged during the check, yet Alice got %d DMs about it, want step 1's only", acked, n)
	}
	if n := count(r.out.sent(), homeChat, "re-notification 1"); n != 1 {
		t.Errorf("%d re-notification notes, want the unacknowledged alert's only", n)
	}
}

// The direct messages of the steps carry the buttons of the alert's
// message (the same reference), and the people they go to may press them
// there; a notice in another chat gets none.
func TestEngineDirectMessagesCarryTheButtons(t *testing.T) {
	pol := threePolicy()
	pol.Steps[0].Targets = append(pol.Steps[0].Targets, Target{Chat: "-1009"})
	r := newRig(t, pol)
	e := r.engine(nil)
	ctx := context.Background()
	subj := buttons.Subject{Chat: homeChat, ThreadKey: "alert/alert-1/db", Text: "disk full 1", Actions: []string{buttons.Ack, buttons.Silence1h}}
	kb, err := buttons.Keyboard(ctx, r.rdb, subj, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ref := buttons.RefOf(kb)
	st := Start{Route: "db", Identity: "alert-1", Policy: pol.Name, Homes: []Home{{Chat: homeChat, Thread: subj.ThreadKey, Ref: ref}},
		Alert: Subject{Title: "disk full 1", Severity: "critical"}, FiredAt: r.clock.time()}
	if ok, err := r.store.Begin(ctx, st); !ok || err != nil {
		t.Fatalf("Begin = %v, %v", ok, err)
	}
	r.check(e)
	r.clock.add(2 * time.Minute)
	r.check(e)
	var dm, notice jobs.SendMessage
	for _, m := range r.out.sent() {
		switch m.Chat {
		case "1001":
			dm = m
		case "-1009":
			notice = m
		}
	}
	if dm.Buttons == nil || !reflect.DeepEqual(*dm.Buttons, *kb) {
		t.Fatalf("Alice's DM has the buttons %+v, want the alert's %+v", dm.Buttons, kb)
	}
	if !strings.Contains(dm.Text, "Acknowledge it with the button below.") {
		t.Errorf("Alice's DM reads %q", dm.Text)
	}
	if notice.Text == "" || notice.Buttons != nil {
		t.Errorf("the notice in another chat: %+v, want one without buttons", notice)
	}
	for user, want := range map[int64]bool{alice.ID: true, bob.ID: false} {
		if ok, err := buttons.DirectAllowed(ctx, r.rdb, "", ref, user); err != nil || ok != want {
			t.Errorf("user %d may press in their DM: %v (%v), want %v", user, ok, err, want)
		}
	}
}
