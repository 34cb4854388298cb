package telegramfake

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPressMakesACallbackQueryUpdate(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "-100200", "disk full", "ack:fp1", "silence:fp1:1h")
	clock.Advance(time.Second)
	q, err := s.Press("", -100200, id, alice, "silence:fp1:1h")
	if err != nil {
		t.Fatal(err)
	}
	if q.ID == "" || q.UpdateID <= 0 || q.Bot != DefaultBot || q.ChatID != -100200 || q.MessageID != id ||
		q.From != alice || q.Data != "silence:fp1:1h" || !q.At.Equal(epoch.Add(time.Second)) || q.ChatInstance == "" {
		t.Errorf("query %+v", q)
	}

	ups := getUpdates(t, s, testToken, nil)
	if len(ups) != 1 || ups[0].UpdateID != q.UpdateID || ups[0].CallbackQuery == nil {
		t.Fatalf("updates %+v", ups)
	}
	cq := ups[0].CallbackQuery
	if cq.ID != q.ID || cq.From != alice || cq.Data != q.Data || cq.ChatInstance != q.ChatInstance ||
		cq.Message == nil || cq.Message.MessageID != id || cq.Message.Chat.ID != -100200 || cq.Message.Text != "disk full" ||
		!strings.Contains(string(cq.Message.ReplyMarkup), "silence:fp1:1h") {
		t.Errorf("callback_query %+v message %+v", cq, cq.Message)
	}
	// A second press in the same chat has the same chat_instance and the
	// next update id.
	q2, err := s.Press("", -100200, id, User{ID: 7002}, "ack:fp1")
	if err != nil || q2.ChatInstance != q.ChatInstance || q2.UpdateID != q.UpdateID+1 || q2.ID == q.ID || q2.From.FirstName == "" {
		t.Errorf("second press %+v %v", q2, err)
	}
}

func TestPressRefusals(t *testing.T) {
	t.Parallel()
	cfg := twoBots()
	cfg.Bot, cfg.Private = unlimited, unlimited
	s, _ := newFake(t, cfg)
	id := sendKeyboard(t, s, tokenAlerts, "42", "alert", "ack")
	plain := accepted(t, call(s, tokenAlerts, "sendMessage", text("42", "no buttons"))).MessageID
	gone := sendKeyboard(t, s, tokenAlerts, "42", "deleted", "ack")
	if err := s.DeleteMessage(42, gone); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, bot string
		id        int
		from      User
		data      string
		want      string
	}{
		{"no such message", "alerts", 99, alice, "ack", "no such message"},
		{"deleted", "alerts", gone, alice, "ack", "no such message"},
		{"another bot's message", "pages", id, alice, "ack", `sent by bot "alerts"`},
		{"no such button", "alerts", id, alice, "nope", `no button with callback_data "nope"`},
		{"no keyboard", "alerts", plain, alice, "ack", "no button"},
		{"no user", "alerts", id, User{}, "ack", "positive id"},
		{"no bot named", "", id, alice, "ack", "no bot"},
		{"unknown bot", "other", id, alice, "ack", "no bot"},
	}
	for _, tc := range tests {
		if _, err := s.Press(tc.bot, 42, tc.id, tc.from, tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := s.Press("alerts", 42, 99, alice, "ack"); !errors.Is(err, errNoMessage) {
		t.Errorf("missing message: %v", err)
	}
	// A keyboard edited away cannot be pressed.
	accepted(t, call(s, tokenAlerts, "editMessageReplyMarkup", url.Values{"chat_id": {"42"}, "message_id": {"1"}}))
	if _, err := s.Press("alerts", 42, id, alice, "ack"); err == nil {
		t.Error("pressed a removed button")
	}
	if got := s.CallbackQueries("alerts"); len(got) != 0 {
		t.Errorf("refused presses recorded: %+v", got)
	}
}

func TestAnswerCallbackQuery(t *testing.T) {
	t.Parallel()
	const tooOld = "Bad Request: query is too old and response timeout expired or query ID is invalid"
	s, clock := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	q1, _ := s.Press("", 42, id, alice, "ack")
	q2, _ := s.Press("", 42, id, alice, "ack")
	answer := func(qid string, kv ...string) reply {
		return call(s, testToken, "answerCallbackQuery", with(url.Values{"callback_query_id": {qid}}, kv...))
	}

	refused(t, answer(q1.ID, "text", strings.Repeat("a", 201)), http.StatusBadRequest, "Bad Request: MESSAGE_TOO_LONG")
	clock.Advance(defaultCallbackAnswerTimeout - time.Millisecond)
	r := answer(q1.ID, "text", "Acknowledged", "show_alert", "true", "cache_time", "5")
	mustAccept(t, r)
	if d := decode(t, r); string(d.Result) != "true" {
		t.Errorf("answer result %s", r.body)
	}
	refused(t, answer(q1.ID, "text", "again"), http.StatusBadRequest, tooOld)
	clock.Advance(time.Millisecond)
	refused(t, answer(q2.ID), http.StatusBadRequest, tooOld)
	refused(t, answer("12345"), http.StatusBadRequest, tooOld)

	got := s.CallbackQueries("")
	if len(got) != 2 || got[0].Answer == nil || got[0].Answer.Text != "Acknowledged" || !got[0].Answer.ShowAlert ||
		got[0].Answer.CacheTime != 5 || got[0].RefusedAnswers != 1 || got[1].Answer != nil || got[1].RefusedAnswers != 1 {
		t.Errorf("records %+v", got)
	}
	if st := s.Stats(); st.Answered != 1 || st.Rejected != 4 {
		t.Errorf("stats %+v", st)
	}
}

// Queries are per bot: one bot cannot answer another's.
func TestAnswerCallbackQueryIsPerBot(t *testing.T) {
	t.Parallel()
	cfg := twoBots()
	s, _ := newFake(t, cfg)
	id := sendKeyboard(t, s, tokenAlerts, "42", "alert", "ack")
	q, err := s.Press("alerts", 42, id, alice, "ack")
	if err != nil {
		t.Fatal(err)
	}
	refused(t, call(s, tokenPages, "answerCallbackQuery", url.Values{"callback_query_id": {q.ID}}), http.StatusBadRequest,
		"Bad Request: query is too old and response timeout expired or query ID is invalid")
	mustAccept(t, call(s, tokenAlerts, "answerCallbackQuery", url.Values{"callback_query_id": {q.ID}}))
	if s.CallbackQueries("pages") == nil || len(s.CallbackQueries("pages")) != 0 || s.CallbackQueries("nobody") != nil {
		t.Error("CallbackQueries mixes bots")
	}
}

func TestCallbackAnswerTimeoutConfig(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{CallbackAnswerTimeout: -1})
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	q, _ := s.Press("", 42, id, alice, "ack")
	clock.Advance(24 * time.Hour)
	mustAccept(t, call(s, testToken, "answerCallbackQuery", url.Values{"callback_query_id": {q.ID}}))
}

// The update carries the message as it is when pressed, edits included.
func TestPressShowsTheEditedMessage(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	accepted(t, call(s, testToken, "editMessageText", editForm("1", "alert (seen)", "reply_markup", keyboard("ack", "silence"))))
	if _, err := s.Press("", 42, id, alice, "silence"); err != nil {
		t.Fatal(err)
	}
	r := call(s, testToken, "getUpdates", nil)
	mustAccept(t, r)
	if !containsAll(r.body, `"text":"alert (seen)"`, `"edit_date":`, `"callback_data":"silence"`) {
		t.Errorf("update %s", r.body)
	}
}
