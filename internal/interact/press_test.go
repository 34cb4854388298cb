package interact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/silences"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestAcknowledgeByGetUpdates: a press that reaches the worker through
// getUpdates records who acknowledged, is answered, and edits the alert's
// message: its text gets the line, the Acknowledge button goes and the
// silence buttons stay. A second user's acknowledgement is told who was
// first and edits nothing.
func TestAcknowledgeByGetUpdates(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	msg := h.sendAlert(t, subject("pages", "fp-ack"))

	q := h.press(t, msg, alice, buttons.Ack)
	if got := h.answered(t, "pages", q.ID).Answer; got.Text != "Acknowledged" || got.ShowAlert {
		t.Fatalf("answer %+v, want a plain Acknowledged", got)
	}
	cur := h.current(t, msg, "the acknowledgement on the message", func(e telegramfake.Edit) bool {
		return hasLine(e.Text, "✅ Acknowledged by @alice at ")
	})
	if !strings.HasPrefix(cur.Text, "<b>FIRING</b> disk full on db-1 &amp; db-2\n\n✅ Acknowledged by @alice at ") || !strings.HasSuffix(cur.Text, " UTC") {
		t.Errorf("edited text %q", cur.Text)
	}
	if cur.ParseMode != "HTML" {
		t.Errorf("edited parse mode %q, want HTML", cur.ParseMode)
	}
	if got := keyboardActions(cur); !slices.Equal(got, []string{buttons.Silence1h, buttons.Silence24h}) {
		t.Errorf("buttons after the acknowledgement %v, want the silence buttons", got)
	}
	raw, err := h.rdb.Get(h.ctx, keys.Bot("pages").Acknowledged(testChat, "fp-ack#"+strconv.Itoa(msg.MessageID))).Bytes()
	if err != nil {
		t.Fatalf("no acknowledgement stored: %v", err)
	}
	var a ack
	if err := json.Unmarshal(raw, &a); err != nil || a.By != "@alice" || a.UserID != alice.ID || a.Query != q.ID {
		t.Fatalf("acknowledgement %s (%v)", raw, err)
	}
	if n := len(h.fake.MessagesOf("pages")); n != 1 {
		t.Errorf("%d messages, want the alert only (edited)", n)
	}

	// Alice and Bob both press Acknowledge on a second alert before its
	// edit removes the button: the first wins, the other is told who.
	msg2 := h.sendAlert(t, subject("pages", "fp-ack-2"))
	qa, qb := h.press(t, msg2, alice, buttons.Ack), h.press(t, msg2, bob, buttons.Ack)
	aa, ab := h.answered(t, "pages", qa.ID).Answer.Text, h.answered(t, "pages", qb.ID).Answer.Text
	first := "@alice"
	if aa != "Acknowledged" {
		aa, ab, first = ab, aa, "@bobby"
	}
	if aa != "Acknowledged" || !strings.HasPrefix(ab, "Already acknowledged by "+first+" at ") {
		t.Errorf("answers %q and %q, want one acknowledgement and one saying who was first", aa, ab)
	}
	h.current(t, msg2, "the first acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by "+first) })
	time.Sleep(300 * time.Millisecond)
	if n := len(h.fake.Edits(msg2.ChatID, msg2.MessageID)); n != 1 {
		t.Errorf("%d edits of the second alert, want 1", n)
	}

	// An alert whose thread closed (it resolved with a reply) still shows
	// an acknowledgement: on the message pressed.
	msg3 := h.sendAlert(t, subject("pages", "fp-ack-3"))
	if err := h.rdb.Del(h.ctx, keys.Bot("pages").Thread(testChat, "fp-ack-3")).Err(); err != nil {
		t.Fatal(err)
	}
	q3 := h.press(t, msg3, alice, buttons.Ack)
	h.answered(t, "pages", q3.ID)
	h.current(t, msg3, "the acknowledgement of a resolved alert", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })
	if n := len(h.fake.MessagesOf("pages")); n != 3 {
		t.Errorf("%d messages, want the three alerts (edited, nothing new)", n)
	}

	// The first alert resolves (its thread closes) and fires again: the
	// new firing is acknowledged afresh, its message shows no old line.
	if err := h.rdb.Del(h.ctx, keys.Bot("pages").Thread(testChat, "fp-ack")).Err(); err != nil {
		t.Fatal(err)
	}
	again := h.sendAlert(t, subject("pages", "fp-ack"))
	q4 := h.press(t, again, bob, buttons.Ack)
	if got := h.answered(t, "pages", q4.ID).Answer.Text; got != "Acknowledged" {
		t.Errorf("acknowledgement of the alert firing again answered %q", got)
	}
	cur = h.current(t, again, "the new acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @bobby") })
	if hasLine(cur.Text, "@alice") {
		t.Errorf("the new firing shows the old acknowledgement: %q", cur.Text)
	}
	if n := h.presses(t, map[string]string{"bot": "pages", "action": "ack", "outcome": outcomeAccepted}); n != 5 {
		t.Errorf("accepted acknowledgements counted %v, want 5", n)
	}
}

// TestRedeliveredPressActsOnce: Telegram delivers one press six times;
// one acknowledgement is recorded and the message is edited once.
func TestRedeliveredPressActsOnce(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	msg := h.sendAlert(t, subject("status", "fp-redeliver"))
	q := h.press(t, msg, alice, buttons.Ack)
	if err := h.fake.Redeliver("status", q.UpdateID, 5); err != nil {
		t.Fatal(err)
	}
	h.answered(t, "status", q.ID)
	h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })
	h.waitFor(t, "every copy delivered", func() bool {
		for _, c := range h.fake.CallbackQueries("status") {
			if c.ID == q.ID {
				return c.Deliveries >= 6
			}
		}
		return false
	})
	// Let the copies' tasks (if any got through) run out.
	time.Sleep(500 * time.Millisecond)
	if n := len(h.fake.Edits(msg.ChatID, msg.MessageID)); n != 1 {
		t.Errorf("%d edits, want 1", n)
	}
	lines, _ := h.rdb.LRange(h.ctx, keys.Bot("status").PressLines(testChat, "fp-redeliver#"+strconv.Itoa(msg.MessageID)), 0, -1).Result()
	if len(lines) != 1 {
		t.Errorf("press lines %q, want one", lines)
	}
	if n := h.presses(t, map[string]string{"bot": "status", "outcome": outcomeAccepted}); n != 1 {
		t.Errorf("accepted presses %v, want 1", n)
	}
	for _, c := range h.fake.CallbackQueries("status") {
		if c.ID == q.ID && c.RefusedAnswers != 0 {
			t.Errorf("the press was answered %d more times than Telegram took", c.RefusedAnswers)
		}
	}
}

// TestPressRefused: a user the route does not allow is told so in an
// alert, and nothing is recorded or edited.
func TestPressRefused(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	s := subject("pages", "fp-refused")
	s.Allowed = []string{"@Alice", "777"}
	msg := h.sendAlert(t, s)
	q := h.press(t, msg, bob, buttons.Silence1h)
	got := h.answered(t, "pages", q.ID).Answer
	if got.Text != "You may not do this here" || !got.ShowAlert {
		t.Fatalf("answer %+v, want the refusal as an alert", got)
	}
	if n, _ := h.rdb.Exists(h.ctx, keys.Bot("pages").Acknowledged(testChat, "fp-refused#"+strconv.Itoa(msg.MessageID))).Result(); n != 0 {
		t.Errorf("a refused press left an acknowledgement")
	}
	if rec, _ := h.rdb.HGetAll(h.ctx, keys.Bot("pages").CallbackQuery(q.ID)).Result(); rec["owner"] != "" || rec["answerer"] == "" {
		t.Errorf("a refused press's record is %v, want its answer claimed and nothing recorded", rec)
	}
	if list, err := h.store.List(h.ctx, silences.FilterAll); err != nil || len(list) != 0 {
		t.Errorf("silences after a refused press: %v (%v)", list, err)
	}
	if n := h.presses(t, map[string]string{"bot": "pages", "action": "s1h", "outcome": outcomeRefused}); n != 1 {
		t.Errorf("refused presses counted %v, want 1", n)
	}
	// Alice, named by username in another case, may.
	qa := h.press(t, msg, alice, buttons.Ack)
	if got := h.answered(t, "pages", qa.ID).Answer.Text; got != "Acknowledged" {
		t.Errorf("Alice's press answered %q", got)
	}
	if n := len(h.fake.Edits(msg.ChatID, msg.MessageID)); n > 1 {
		t.Errorf("%d edits", n)
	}
}

// TestSilencePress: Silence 1h creates a silence of the alert's matchers
// for an hour, which the routing of the next matching alert honours, and
// shows it on the message.
func TestSilencePress(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	msg := h.sendAlert(t, subject("pages", "fp-silence"))
	before := time.Now()
	q := h.press(t, msg, alice, buttons.Silence1h)
	if got := h.answered(t, "pages", q.ID).Answer.Text; got != "Silenced for 1h" {
		t.Fatalf("answer %q", got)
	}
	cur := h.current(t, msg, "the silence on the message", func(e telegramfake.Edit) bool {
		return hasLine(e.Text, "🔕 Silenced for 1h by @alice (until ")
	})
	if got := keyboardActions(cur); !slices.Equal(got, buttons.Actions) {
		t.Errorf("buttons after the silence %v, want all (the alert is not acknowledged)", got)
	}
	list, err := h.store.List(h.ctx, silences.FilterActive)
	if err != nil || len(list) != 1 {
		t.Fatalf("active silences %+v (%v), want one", list, err)
	}
	sil := list[0]
	if sil.CreatedBy != "@alice (Telegram)" || !strings.Contains(sil.Comment, "DiskFull on db-1") {
		t.Errorf("silence by %q with comment %q", sil.CreatedBy, sil.Comment)
	}
	if d := sil.EndsAt.Sub(sil.StartsAt); d != time.Hour {
		t.Errorf("silence lasts %v, want 1h", d)
	}
	if sil.StartsAt.Before(before.Add(-time.Second)) {
		t.Errorf("silence starts %v, before the press", sil.StartsAt)
	}
	if len(sil.Matchers) != 2 || sil.Matchers[0].Name != "source" || sil.Matchers[1].Value != "DiskFull" {
		t.Errorf("matchers %+v", sil.Matchers)
	}
	// The next matching alert is caught (the Router asks exactly this
	// before it enqueues); another is not.
	next := &alerts.Alert{Title: "disk full", Source: "grafana", Labels: map[string]string{"alertname": "DiskFull", "host": "db-9"}}
	if id, err := h.store.Silenced(h.ctx, next, time.Now()); err != nil || id != sil.ID {
		t.Errorf("next matching alert silenced by %q (%v), want %s", id, err, sil.ID)
	}
	other := &alerts.Alert{Title: "cpu", Source: "grafana", Labels: map[string]string{"alertname": "HighCPU"}}
	if id, _ := h.store.Silenced(h.ctx, other, time.Now()); id != "" {
		t.Errorf("another alert silenced by %s", id)
	}

	// Silence 24h later and an acknowledgement: the lines pile up.
	q2 := h.press(t, msg, bob, buttons.Ack)
	h.answered(t, "pages", q2.ID)
	cur = h.current(t, msg, "both lines", func(e telegramfake.Edit) bool {
		return hasLine(e.Text, "🔕 Silenced for 1h by @alice") && hasLine(e.Text, "✅ Acknowledged by @bobby")
	})
	if strings.Index(cur.Text, "Silenced") > strings.Index(cur.Text, "Acknowledged") {
		t.Errorf("lines out of order: %q", cur.Text)
	}
}

// TestHandlerDedupAndResume drives the handler directly: a press is
// handled and answered once whichever task brings it (the other tasks do
// nothing), an unknown subject is answered "no longer
// tracked", and a press recorded by a task that stopped half-way is
// finished by that task's retry without a second silence.
func TestHandlerDedupAndResume(t *testing.T) {
	t.Parallel()
	h := setup(t, options{})
	msg := h.sendAlert(t, subject("pages", "fp-direct"))
	q := h.press(t, msg, alice, buttons.Ack)
	task := func(id string, q telegramfake.CallbackQuery) broker.Task {
		return pressTask(t, id, q, messageJSON(q.MessageID, q.ChatID, ""))
	}
	for _, id := range []string{"t1", "t1", "t2", "t3"} {
		if err := h.handler.Handle(h.ctx, task(id, q)); err != nil {
			t.Fatalf("task %s: %v", id, err)
		}
	}
	got := h.answered(t, "pages", q.ID)
	if got.Answer.Text != "Acknowledged" {
		t.Errorf("answer %q", got.Answer.Text)
	}
	time.Sleep(200 * time.Millisecond)
	for _, c := range h.fake.CallbackQueries("pages") {
		if c.ID == q.ID && c.RefusedAnswers != 0 {
			t.Errorf("the duplicates answered %d times, want never", c.RefusedAnswers)
		}
	}
	if n := h.presses(t, map[string]string{"outcome": outcomeDuplicate}); n != 2 {
		t.Errorf("duplicates counted %v, want 2", n)
	}
	h.current(t, msg, "the one edit", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })

	// The same button pressed on a copy of the message in another chat.
	qc := h.press(t, msg, bob, buttons.Silence1h)
	if err := h.handler.Handle(h.ctx, pressTask(t, "t-copy", qc, messageJSON(1, 999, ""))); err != nil {
		t.Fatal(err)
	}
	if got := h.answered(t, "pages", qc.ID).Answer; got.Text != "You may not do this here" || !got.ShowAlert {
		t.Errorf("press in another chat answered %+v", got)
	}
	if list, _ := h.store.List(h.ctx, silences.FilterAll); len(list) != 0 {
		t.Errorf("a press in another chat created %d silences", len(list))
	}

	// An alert no longer tracked.
	msg2 := h.sendAlert(t, subject("pages", "fp-gone"))
	_, ref, _ := buttons.ParseData(msg2.ReplyMarkup.InlineKeyboard[0][0].CallbackData)
	if err := h.rdb.Del(h.ctx, keys.Bot("pages").ButtonSubject(ref)).Err(); err != nil {
		t.Fatal(err)
	}
	qg := h.press(t, msg2, alice, buttons.Ack)
	if err := h.handler.Handle(h.ctx, task("t4", qg)); err != nil {
		t.Fatal(err)
	}
	if got := h.answered(t, "pages", qg.ID).Answer.Text; got != "This alert is no longer tracked" {
		t.Errorf("answer %q", got)
	}

	// A silence press recorded by task t5, whose silence was created but
	// not noted before it stopped: its retry finds the silence.
	msg3 := h.sendAlert(t, subject("pages", "fp-resume"))
	qs := h.press(t, msg3, alice, buttons.Silence24h)
	sp := keys.Bot("pages")
	if err := h.rdb.HSet(h.ctx, sp.CallbackQuery(qs.ID), "owner", "t5", "action", buttons.Silence24h).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Create(h.ctx, silences.Input{Matchers: []silences.Matcher{{Name: "source", Value: "grafana"}},
		Duration: 24 * time.Hour, Comment: silenceComment("DiskFull on db-1", 24*time.Hour, qs.ID), CreatedBy: "@alice (Telegram)"}); err != nil {
		t.Fatal(err)
	}
	if err := h.handler.Handle(h.ctx, task("t5", qs)); err != nil {
		t.Fatal(err)
	}
	if got := h.answered(t, "pages", qs.ID).Answer.Text; got != "Silenced for 24h" {
		t.Errorf("answer %q", got)
	}
	if list, _ := h.store.List(h.ctx, silences.FilterLive); len(list) != 1 {
		t.Errorf("%d silences after the resumed press, want 1", len(list))
	}
	h.current(t, msg3, "the silence line", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Silenced for 24h by @alice") })
	if done, _ := h.rdb.HGet(h.ctx, sp.CallbackQuery(qs.ID), fieldDone).Result(); done != "1" {
		t.Errorf("the resumed press is not marked done")
	}
}

// TestPressChatUnsure: a press is refused, not acted on, when nothing
// shows that it comes from the alert's chat: the alert went to an
// @channel whose chat id the worker no longer remembers, or the update
// has no message (inline mode). Telegram naming the pressed channel by
// the alert's @username, or the remembered id, lets it through.
func TestPressChatUnsure(t *testing.T) {
	t.Parallel()
	h := setup(t, options{})
	s := subject("pages", "fp-channel")
	s.Chat = "@alerts_ch"
	msg := h.sendAlert(t, s)
	sp := keys.Bot("pages")
	if err := h.rdb.Del(h.ctx, sp.ChatID(s.Chat)).Err(); err != nil {
		t.Fatal(err)
	}
	// handle presses action's button as Alice, hands the handler the
	// press with message (JSON; "" none) and returns the answer.
	n := 0
	handle := func(action, message string) telegramfake.CallbackAnswer {
		t.Helper()
		q := h.press(t, msg, alice, action)
		n++
		if err := h.handler.Handle(h.ctx, pressTask(t, "t-chan-"+strconv.Itoa(n), q, message)); err != nil {
			t.Fatal(err)
		}
		a := h.answered(t, "pages", q.ID).Answer
		if a.Text == answerUnsureChat {
			if owner, _ := h.rdb.HGet(h.ctx, sp.CallbackQuery(q.ID), "owner").Result(); owner != "" {
				t.Errorf("a refused press was recorded")
			}
		}
		return *a
	}
	chatJSON := func(id int64, username string) string { return messageJSON(msg.MessageID, id, username) }
	refused := func(what string, a telegramfake.CallbackAnswer) {
		t.Helper()
		if a.Text != answerUnsureChat || !a.ShowAlert {
			t.Errorf("%s answered %+v, want %q as an alert", what, a, answerUnsureChat)
		}
	}
	refused("a press in the channel, its id forgotten", handle(buttons.Ack, chatJSON(msg.ChatID, "")))
	refused("an inline-only press", handle(buttons.Ack, ""))
	refused("a press in a private chat of the channel's name", handle(buttons.Ack, chatJSON(5555, "alerts_ch")))
	if got := h.presses(t, map[string]string{"bot": "pages", "outcome": outcomeRefused}); got != 3 {
		t.Errorf("refused presses counted %v, want 3", got)
	}
	if list, _ := h.store.List(h.ctx, silences.FilterAll); len(list) != 0 {
		t.Errorf("refused presses created %d silences", len(list))
	}
	if a := handle(buttons.Ack, chatJSON(msg.ChatID, "Alerts_CH")); a.Text != answerAcknowledged {
		t.Errorf("a press in the channel Telegram names @Alerts_CH answered %q", a.Text)
	}
	if err := h.rdb.Set(h.ctx, sp.ChatID(s.Chat), strconv.FormatInt(msg.ChatID, 10), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if a := handle(buttons.Silence1h, chatJSON(msg.ChatID, "")); a.Text != "Silenced for 1h" {
		t.Errorf("a press in the channel whose id is remembered answered %q", a.Text)
	}
}

// TestPresserNames: a user with a username is named by it; one without
// by their name and id, which cannot pass for a handle however they chose
// it, in the message (escaped for its parse mode), the acknowledgement
// and the silence.
func TestPresserNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		user telegram.UpdateUser
		want string
	}{
		{telegram.UpdateUser{ID: 7, Username: "alice", FirstName: "Bob"}, "@alice"},
		{telegram.UpdateUser{ID: 1003, FirstName: "@alice"}, "alice (id 1003)"},
		{telegram.UpdateUser{ID: 7, FirstName: "＠alice", LastName: "@@bob"}, "alice bob (id 7)"},
		{telegram.UpdateUser{ID: 7, FirstName: " Alice\t", LastName: "\nSmith "}, "Alice Smith (id 7)"},
		{telegram.UpdateUser{ID: 7, FirstName: "\u202eecila@\u200b"}, "ecila (id 7)"},
		{telegram.UpdateUser{ID: 7, FirstName: "@", LastName: "\u200d"}, "user 7"},
		{telegram.UpdateUser{ID: 7, Username: "not a username", FirstName: "X"}, "X (id 7)"},
		{telegram.UpdateUser{ID: 7, Username: "bob", FirstName: "Bob"}, "Bob (id 7)"},
		{telegram.UpdateUser{ID: 7, Username: "_alice", FirstName: "X"}, "X (id 7)"},
		{telegram.UpdateUser{ID: 7, FirstName: strings.Repeat("x", 40)}, strings.Repeat("x", 31) + "… (id 7)"},
	} {
		if got := c.user.Name(); got != c.want {
			t.Errorf("%+v named %q, want %q", c.user, got, c.want)
		}
	}

	h := setup(t, options{poller: true})
	msg := h.sendAlert(t, subject("pages", "fp-names"))
	fake := telegramfake.User{ID: 1003, FirstName: "@alice"}
	q := h.press(t, msg, fake, buttons.Ack)
	h.answered(t, "pages", q.ID)
	cur := h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by ") })
	if !hasLine(cur.Text, "✅ Acknowledged by alice (id 1003) at ") || hasLine(cur.Text, "@alice") {
		t.Errorf("acknowledgement by a first name %q shows as %q", fake.FirstName, cur.Text)
	}
	raw, _ := h.rdb.Get(h.ctx, keys.Bot("pages").Acknowledged(testChat, "fp-names#"+strconv.Itoa(msg.MessageID))).Bytes()
	var a ack
	if err := json.Unmarshal(raw, &a); err != nil || a.By != "alice (id 1003)" || a.UserID != 1003 {
		t.Errorf("acknowledgement %s (%v)", raw, err)
	}
	// Alice, named by her username, and Eve, whose name needs escaping.
	qa := h.press(t, msg, alice, buttons.Silence1h)
	h.answered(t, "pages", qa.ID)
	eve := telegramfake.User{ID: 1004, FirstName: "<i>Eve</i>", LastName: "& co"}
	qe := h.press(t, msg, eve, buttons.Silence24h)
	h.answered(t, "pages", qe.ID)
	cur = h.current(t, msg, "both silences", func(e telegramfake.Edit) bool { return strings.Count(e.Text, "Silenced for") == 2 })
	if !hasLine(cur.Text, "🔕 Silenced for 1h by @alice (until ") || !hasLine(cur.Text, "🔕 Silenced for 24h by &lt;i&gt;Eve&lt;/i&gt; &amp; co (id 1004) (until ") {
		t.Errorf("silence lines %q", cur.Text)
	}
	list, err := h.store.List(h.ctx, silences.FilterActive)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, s := range list {
		by = append(by, s.CreatedBy)
	}
	slices.Sort(by)
	if want := []string{"<i>Eve</i> & co (id 1004) (Telegram)", "@alice (Telegram)"}; !slices.Equal(by, want) {
		t.Errorf("silences created by %q, want %q", by, want)
	}
}

// pressTask is a TypeUpdate task bringing q as Telegram would, with the
// message given in JSON ("" for none, as for a message sent in inline
// mode).
func pressTask(t *testing.T, id string, q telegramfake.CallbackQuery, message string) broker.Task {
	t.Helper()
	from, _ := json.Marshal(q.From)
	raw := `{"update_id": ` + strconv.Itoa(q.UpdateID) + `, "callback_query": {"id": "` + q.ID + `", "from": ` + string(from) +
		`, "data": "` + q.Data + `"`
	if message != "" {
		raw += `, "message": ` + message + `}}`
	} else {
		raw += `, "inline_message_id": "AAA"}}`
	}
	var u telegram.Update
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(payload{V: 1, Bot: "pages", Via: viaPoll, ReceivedAt: time.Now(), Update: u})
	return broker.Task{Type: TypeUpdate, Payload: body, ID: id, Queue: "critical"}
}

// messageJSON is a callback query's message in chat, named by username
// ("" none).
func messageJSON(messageID int, chat int64, username string) string {
	return `{"message_id": ` + strconv.Itoa(messageID) + `, "chat": {"id": ` + strconv.FormatInt(chat, 10) +
		`, "username": "` + username + `"}}`
}
