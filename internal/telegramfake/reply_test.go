package telegramfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fields  []string // added to a sendMessage to chat 42, whose message 1 exists and 2 was deleted
		desc    string   // the 400's description; empty for success
		replyTo *replyRef
	}{
		{"reply_parameters", []string{"reply_parameters", `{"message_id":1}`}, "", &replyRef{42, 1}},
		{"reply_to_message_id", []string{"reply_to_message_id", "1"}, "", &replyRef{42, 1}},
		{"reply_parameters wins", []string{"reply_parameters", `{"message_id":1}`, "reply_to_message_id", "9"}, "", &replyRef{42, 1}},
		{"in another chat", []string{"reply_parameters", `{"message_id":1,"chat_id":-100500}`}, "", &replyRef{-100500, 1}},
		{"message_id 0 is no reply", []string{"reply_parameters", `{"message_id":0}`}, "", nil},
		{"empty object is no reply", []string{"reply_parameters", `{}`}, "", nil},
		{"missing", []string{"reply_parameters", `{"message_id":9}`}, "message to be replied not found", nil},
		{"deleted", []string{"reply_parameters", `{"message_id":2}`}, "message to be replied not found", nil},
		{"missing, old style", []string{"reply_to_message_id", "9"}, "message to be replied not found", nil},
		{"deleted, allowed without", []string{"reply_parameters", `{"message_id":2,"allow_sending_without_reply":true}`}, "", nil},
		{"missing, allowed without, old style", []string{"reply_to_message_id", "9", "allow_sending_without_reply", "true"}, "", nil},
		{"another chat ignores allow", []string{"reply_parameters", `{"message_id":9,"chat_id":-100500,"allow_sending_without_reply":true}`}, "message to be replied not found", nil},
		{"unparsable", []string{"reply_parameters", `{"message_id":`}, "can't parse reply parameters JSON object", nil},
		{"not an object", []string{"reply_parameters", `[1]`}, "object expected as reply parameters", nil},
		{"no message_id", []string{"reply_parameters", `{"chat_id":42}`}, `can't find field "message_id"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, open())
			accepted(t, send(s, text("42", "one")))
			accepted(t, send(s, text("42", "two")))
			accepted(t, send(s, text("-100500", "elsewhere")))
			if err := s.DeleteMessage(42, 2); err != nil {
				t.Fatal(err)
			}
			r := send(s, with(text("42", "the reply"), tc.fields...))
			if tc.desc != "" {
				refused(t, r, http.StatusBadRequest, "Bad Request: "+tc.desc)
				if n := len(s.Messages()); n != 3 {
					t.Errorf("a refused reply was recorded: %d messages", n)
				}
				return
			}
			m := accepted(t, r)
			rec, _ := s.Lookup(42, m.MessageID)
			switch {
			case tc.replyTo == nil && (rec.ReplyTo != nil || m.ReplyToMessage != nil):
				t.Errorf("recorded as a reply: %+v, answer %s", rec.ReplyTo, r.body)
			case tc.replyTo != nil && (rec.ReplyTo == nil || *rec.ReplyTo != *tc.replyTo):
				t.Errorf("reply target %+v, want %+v", rec.ReplyTo, tc.replyTo)
			case tc.replyTo != nil && (m.ReplyToMessage == nil || m.ReplyToMessage.MessageID != 1):
				t.Errorf("answer lacks reply_to_message: %s", r.body)
			}
		})
	}
}

func TestReplyAnswerCarriesTheRepliedMessage(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	accepted(t, send(s, with(text("42", "<b>firing</b>"), "parse_mode", "HTML")))
	m := accepted(t, send(s, with(text("42", "resolved"), "reply_parameters", `{"message_id":1}`)))
	if m.ReplyToMessage == nil || m.ReplyToMessage.Text != "firing" {
		t.Errorf("reply_to_message %+v", m.ReplyToMessage)
	}
	// The replied message is shown as it is now: after an edit, and not at
	// all once deleted.
	accepted(t, call(s, testToken, "editMessageText", url.Values{"chat_id": {"42"}, "message_id": {"1"}, "text": {"edited"}}))
	m = accepted(t, send(s, with(text("42", "again"), "reply_to_message_id", "1")))
	if m.ReplyToMessage == nil || m.ReplyToMessage.Text != "edited" {
		t.Errorf("reply_to_message after an edit %+v", m.ReplyToMessage)
	}
	if err := s.DeleteMessage(42, 1); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	// Message 2 replied to 1; the answer about 2 no longer shows it.
	r := call(s, testToken, "editMessageText", url.Values{"chat_id": {"42"}, "message_id": {"2"}, "text": {"resolved!"}})
	mustAccept(t, r)
	if err := json.Unmarshal([]byte(r.body), &raw); err != nil || raw.Result["reply_to_message"] != nil {
		t.Errorf("deleted message still shown: %s", r.body)
	}
	if err := s.DeleteMessage(42, 99); !errors.Is(err, errNoMessage) {
		t.Errorf("DeleteMessage of no message: %v", err)
	}
}

func TestReplyMarkup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		markup string
		desc   string // empty for success
		want   *inlineKeyboardMarkup
	}{
		{"inline keyboard", `{"inline_keyboard":[[{"text":"Ack","callback_data":"ack:1"},{"text":"Open","url":"https://example.com/a"}]]}`, "",
			&inlineKeyboardMarkup{InlineKeyboard: [][]inlineKeyboardButton{{{Text: "Ack", CallbackData: "ack:1"}, {Text: "Open", URL: "https://example.com/a"}}}}},
		{"other button kinds kept", `{"inline_keyboard":[[{"text":"App","web_app":{"url":"https://example.com"}}]]}`, "",
			&inlineKeyboardMarkup{InlineKeyboard: [][]inlineKeyboardButton{{{Text: "App", Other: "web_app"}}}}},
		{"empty keyboard is none", `{"inline_keyboard":[]}`, "", nil},
		{"reply keyboard accepted, not stored", `{"keyboard":[[{"text":"hi"}]]}`, "", nil},
		{"remove keyboard accepted", `{"remove_keyboard":true}`, "", nil},
		{"unparsable", `{"inline_keyboard":`, "can't parse reply keyboard markup JSON object", nil},
		{"not an object", `[]`, "object expected as reply markup", nil},
		{"rows not arrays", `{"inline_keyboard":[{"text":"x"}]}`, `field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays`, nil},
		{"button not an object", `{"inline_keyboard":[["x"]]}`, "can't parse inline keyboard button: InlineKeyboardButton must be an Object", nil},
		{"text button", `{"inline_keyboard":[[{"text":"x"}]]}`, "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard", nil},
		{"no text", `{"inline_keyboard":[[{"callback_data":"x"}]]}`, `can't parse inline keyboard button: Can't find field "text"`, nil},
		{"callback_data over 64 bytes", `{"inline_keyboard":[[{"text":"x","callback_data":"` + strings.Repeat("é", 33) + `"}]]}`, "BUTTON_DATA_INVALID", nil},
		{"callback_data of 64 bytes", `{"inline_keyboard":[[{"text":"x","callback_data":"` + strings.Repeat("é", 32) + `"}]]}`, "",
			&inlineKeyboardMarkup{InlineKeyboard: [][]inlineKeyboardButton{{{Text: "x", CallbackData: strings.Repeat("é", 32)}}}}},
		{"bad url", `{"inline_keyboard":[[{"text":"x","url":"ftp://x"}]]}`, "BUTTON_URL_INVALID", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, open())
			r := send(s, with(text("42", "alert"), "reply_markup", tc.markup))
			if tc.desc != "" {
				refused(t, r, http.StatusBadRequest, "Bad Request: "+tc.desc)
				return
			}
			m := accepted(t, r)
			got := s.Messages()[0].ReplyMarkup
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) {
				t.Fatalf("recorded %+v, want %+v", got, tc.want)
			}
			if tc.want == nil && m.ReplyMarkup != nil {
				t.Errorf("answer shows a keyboard: %s", r.body)
			}
			if tc.want != nil && !json.Valid(m.ReplyMarkup) {
				t.Errorf("answer lacks reply_markup: %s", r.body)
			}
		})
	}
}

func TestReplyMarkupEchoedAsSent(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	const kb = `{"inline_keyboard":[[{"callback_data":"ack","text":"Ack"}],[{"text":"App","web_app":{"url":"https://e.x"}}]]}`
	m := accepted(t, callJSON(s, testToken, "sendMessage", map[string]any{
		"chat_id": 42, "text": "x", "reply_markup": json.RawMessage(kb),
	}))
	var got, want any
	_ = json.Unmarshal(m.ReplyMarkup, &got)
	_ = json.Unmarshal([]byte(kb), &want)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("reply_markup %s, want %s", gj, wj)
	}
}
