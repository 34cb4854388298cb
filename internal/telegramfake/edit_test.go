package telegramfake

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// editForm is an editMessageText of message id in chat 42.
func editForm(id, txt string, kv ...string) url.Values {
	return with(url.Values{"chat_id": {"42"}, "message_id": {id}, "text": {txt}}, kv...)
}

func TestEditErrors(t *testing.T) {
	t.Parallel()
	const notModified = "message is not modified: specified new message content and reply markup are exactly " +
		"the same as a current content and reply markup of the message"
	// Chat 42 holds: 1 "alert" with a keyboard [ack], 2 sent by the other
	// bot, 3 a photo with caption "graph", 4 "plain" deleted.
	tests := []struct {
		name   string
		method string
		form   url.Values
		desc   string
	}{
		{"same text and keyboard", "editMessageText", editForm("1", "alert", "reply_markup", keyboard("ack")), notModified},
		{"same text in HTML without markup", "editMessageText", editForm("1", "alert", "parse_mode", "HTML", "reply_markup", keyboard("ack")), notModified},
		{"same keyboard only", "editMessageReplyMarkup", url.Values{"chat_id": {"42"}, "message_id": {"1"}, "reply_markup": {keyboard("ack")}}, notModified},
		{"same caption", "editMessageCaption", url.Values{"chat_id": {"42"}, "message_id": {"3"}, "caption": {"graph"}}, notModified},
		{"no such message", "editMessageText", editForm("9", "x"), "message to edit not found"},
		{"no message_id", "editMessageText", url.Values{"chat_id": {"42"}, "text": {"x"}}, "message to edit not found"},
		{"deleted", "editMessageText", editForm("4", "x"), "message to edit not found"},
		{"another bot's message", "editMessageText", editForm("2", "x"), "message can't be edited"},
		{"text of a photo", "editMessageText", editForm("3", "x"), "there is no text in the message to edit"},
		{"caption of a text", "editMessageCaption", url.Values{"chat_id": {"42"}, "message_id": {"1"}, "caption": {"x"}}, "there is no caption in the message to edit"},
		{"no identifier", "editMessageText", url.Values{"text": {"x"}}, "message identifier is not specified"},
		{"inline message", "editMessageText", url.Values{"inline_message_id": {"AAA"}, "text": {"x"}}, "MESSAGE_ID_INVALID"},
		{"no chat", "editMessageText", url.Values{"message_id": {"1"}, "text": {"x"}}, "chat_id is empty"},
		{"empty text", "editMessageText", editForm("1", " "), "message text is empty"},
		{"text too long", "editMessageText", editForm("1", strings.Repeat("a", 4097)), "message is too long"},
		{"caption too long", "editMessageCaption", url.Values{"chat_id": {"42"}, "message_id": {"3"}, "caption": {strings.Repeat("a", 1025)}}, "message caption is too long"},
		{"bad markup", "editMessageText", editForm("1", "<b>x", "parse_mode", "HTML"), ""},
		{"reply keyboard", "editMessageText", editForm("1", "x", "reply_markup", `{"keyboard":[[{"text":"a"}]]}`), "inline keyboard expected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := twoBots()
			cfg.Bot, cfg.Private, cfg.Group = unlimited, unlimited, unlimited
			s, _ := newFake(t, cfg)
			accepted(t, call(s, tokenAlerts, "sendMessage", with(text("42", "alert"), "reply_markup", keyboard("ack"))))
			accepted(t, call(s, tokenPages, "sendMessage", text("42", "theirs")))
			accepted(t, serve(s, multipartRequest(tokenAlerts, "sendPhoto", map[string]string{"chat_id": "42", "caption": "graph"},
				"photo", "g.png", strings.NewReader(string(pngBytes(t, 4, 3))))))
			accepted(t, call(s, tokenAlerts, "sendMessage", text("42", "plain")))
			if err := s.DeleteMessage(42, 4); err != nil {
				t.Fatal(err)
			}
			r := call(s, tokenAlerts, tc.method, tc.form)
			if tc.desc == "" {
				if r.code != http.StatusBadRequest || !strings.Contains(r.body, "can't parse entities") {
					t.Fatalf("want a 400 about entities, got %d %s", r.code, r.body)
				}
			} else {
				refused(t, r, http.StatusBadRequest, "Bad Request: "+tc.desc)
			}
			if st := s.Stats(); st.Edited != 0 {
				t.Errorf("a refused edit was counted: %+v", st)
			}
			for _, m := range s.Messages() {
				if m.Edited != 0 || m.LastEdit != nil {
					t.Errorf("message %d changed: %+v", m.MessageID, m)
				}
			}
		})
	}
}

func TestEditKeepsHistory(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, open())
	sent := accepted(t, send(s, with(text("42", "<b>firing</b>"), "parse_mode", "HTML", "reply_markup", keyboard("ack", "silence"))))
	if sent.EditDate != 0 {
		t.Errorf("a new message has edit_date: %+v", sent)
	}

	clock.Advance(time.Minute)
	// An edit without reply_markup removes the keyboard, as on Telegram.
	m := accepted(t, call(s, testToken, "editMessageText", editForm("1", "<b>firing</b> (acknowledged by @alice)", "parse_mode", "HTML")))
	if m.Text != "firing (acknowledged by @alice)" || m.ReplyMarkup != nil || m.EditDate != epoch.Add(time.Minute).Unix() {
		t.Errorf("edited message %+v", m)
	}
	clock.Advance(time.Minute)
	m = accepted(t, call(s, testToken, "editMessageReplyMarkup", url.Values{"chat_id": {"42"}, "message_id": {"1"}, "reply_markup": {keyboard("unsilence")}}))
	if m.Text != "firing (acknowledged by @alice)" || !strings.Contains(string(m.ReplyMarkup), "unsilence") {
		t.Errorf("markup edit %+v", m)
	}
	// An edit that only changes the formatting is a change.
	accepted(t, call(s, testToken, "editMessageText", editForm("1", "firing (acknowledged by @alice)", "reply_markup", keyboard("unsilence"))))

	rec, ok := s.Lookup(42, 1)
	if !ok || rec.Text != "<b>firing</b>" || rec.Edited != 3 || rec.LastEdit == nil {
		t.Fatalf("record %+v", rec)
	}
	cur := rec.Current()
	if cur.Method != "editMessageText" || cur.Text != "firing (acknowledged by @alice)" || cur.ParseMode != "" ||
		cur.ReplyMarkup == nil || cur.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "unsilence" {
		t.Errorf("current %+v", cur)
	}
	edits := s.Edits(42, 1)
	if len(edits) != 3 || edits[0].ReplyMarkup != nil || edits[0].ParseMode != "HTML" ||
		edits[1].Method != "editMessageReplyMarkup" || !edits[1].At.Equal(epoch.Add(2*time.Minute)) {
		t.Errorf("edits %+v", edits)
	}
	if st := s.Stats(); st.Edited != 3 || st.Accepted != 1 || len(s.Messages()) != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestEditCaption(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	accepted(t, send(s, text("42", "first")))
	accepted(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {"https://grafana.example/render/1.png"}, "caption": {"cpu high"}}))
	m := accepted(t, call(s, testToken, "editMessageCaption", url.Values{"chat_id": {"42"}, "message_id": {"2"}, "caption": {"<i>cpu ok</i>"}, "parse_mode": {"HTML"}}))
	if m.Caption != "cpu ok" || len(m.Photo) != 1 {
		t.Errorf("edited photo %+v", m)
	}
	// No caption removes it.
	m = accepted(t, call(s, testToken, "editMessageCaption", url.Values{"chat_id": {"42"}, "message_id": {"2"}}))
	if m.Caption != "" {
		t.Errorf("caption not removed: %+v", m)
	}
	if cur := s.Messages()[1].Current(); cur.Caption != "" || cur.Method != "editMessageCaption" {
		t.Errorf("current %+v", cur)
	}
}

// Edits count against the chat's limits as sends do, and flood waits
// refuse them.
func TestEditsAreFloodControlled(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	accepted(t, send(s, text("42", "firing")))
	clock.Advance(time.Second)
	accepted(t, call(s, testToken, "editMessageText", editForm("1", "acknowledged")))
	clock.Advance(500 * time.Millisecond)
	if retry := mustRetryAfter(t, call(s, testToken, "editMessageText", editForm("1", "again"))); retry != 1 {
		t.Errorf("retry_after %d", retry)
	}
	mustRetryAfter(t, send(s, text("42", "inside the wait")))
	clock.Advance(time.Second)
	accepted(t, send(s, text("42", "after the wait")))
	st := s.Stats()
	if st.Edited != 1 || st.TooManyByChat["42"] != 2 || st.InsideWait != 1 {
		t.Errorf("stats %+v", st)
	}
	// A "not modified" edit is refused before flood control: it costs
	// nothing.
	clock.Advance(time.Second)
	refused(t, call(s, testToken, "editMessageText", editForm("1", "acknowledged")), http.StatusBadRequest,
		"Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	accepted(t, send(s, text("42", "still admitted")))
}

func TestEditFaults(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	accepted(t, send(s, text("42", "firing")))
	s.FailNext(1, FaultServerError)
	if r := call(s, testToken, "editMessageText", editForm("1", "acknowledged")); r.code != http.StatusInternalServerError {
		t.Errorf("FailNext on an edit: %d %s", r.code, r.body)
	}
	s.SetChat("42", ChatBehavior{Blocked: true})
	refused(t, call(s, testToken, "editMessageText", editForm("1", "acknowledged")), http.StatusForbidden, "Forbidden: bot was blocked by the user")
	if m := s.Messages()[0]; m.Edited != 0 {
		t.Errorf("edited %+v", m)
	}
}
