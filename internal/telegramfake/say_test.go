package telegramfake

import (
	"encoding/json"
	"net/url"
	"testing"
)

// messageUpdates calls getUpdates and decodes its message updates.
func messageUpdates(t *testing.T, s *Server, form url.Values) []userMessageJSON {
	t.Helper()
	r := call(s, testToken, "getUpdates", form)
	mustAccept(t, r)
	var ups []struct {
		UpdateID int              `json:"update_id"`
		Message  *userMessageJSON `json:"message"`
	}
	if err := json.Unmarshal(decode(t, r).Result, &ups); err != nil {
		t.Fatal(err)
	}
	var out []userMessageJSON
	for _, u := range ups {
		if u.Message != nil {
			out = append(out, *u.Message)
		}
	}
	return out
}

// A bot in privacy mode receives every message of a private chat and only
// the commands of a group; a command carries its bot_command entity; the
// person's message takes its id among the chat's.
func TestSayPrivacyMode(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	sent := sendKeyboard(t, s, testToken, "-1001234", "alert", "ack")
	mustSay := func(chat int64, topic int, text string, want bool) int {
		t.Helper()
		id, delivered, err := s.Say("", chat, topic, alice, text)
		if err != nil || delivered != want {
			t.Fatalf("Say(%d, %q) = %d, %v, %v; want delivered %v", chat, text, id, delivered, err, want)
		}
		return id
	}
	cmd := mustSay(-1001234, 5, "/oncall@herald_bot primary", true)
	if cmd != sent+1 {
		t.Errorf("the person's message has id %d, want %d (after the bot's)", cmd, sent+1)
	}
	mustSay(-1001234, 0, "who is on call?", false)
	mustSay(alice.ID, 0, "hello", true)
	got := messageUpdates(t, s, nil)
	if len(got) != 2 {
		t.Fatalf("%d message updates, want 2: %+v", len(got), got)
	}
	g := got[0]
	if g.Chat.Type != chatSupergroup || g.MessageThreadID != 5 || !g.IsTopicMessage || g.From.ID != alice.ID ||
		len(g.Entities) != 1 || g.Entities[0] != (entityJSON{Type: "bot_command", Offset: 0, Length: 18}) {
		t.Errorf("the command's update %+v", g)
	}
	if p := got[1]; p.Chat.Type != chatPrivate || p.Text != "hello" || len(p.Entities) != 0 {
		t.Errorf("the private message's update %+v", p)
	}
	if m, ok := s.Lookup(-1001234, cmd); ok {
		t.Errorf("the person's message is among the bot's: %+v", m)
	}
	if _, err := s.Press("", -1001234, sent, alice, "ack"); err != nil {
		t.Errorf("the bot's message before the person's is no longer found: %v", err)
	}
	// A bot that asks for callback queries only gets no messages.
	messageUpdates(t, s, url.Values{"allowed_updates": {`["callback_query"]`}})
	mustSay(alice.ID, 0, "/oncall", false)
	for _, bad := range []struct {
		chat  int64
		topic int
		text  string
	}{{alice.ID + 1, 0, "hi"}, {alice.ID, 0, " "}, {-4321, 3, "/oncall"}} {
		if _, _, err := s.Say("", bad.chat, bad.topic, alice, bad.text); err == nil {
			t.Errorf("Say(%d, %d, %q) made a message", bad.chat, bad.topic, bad.text)
		}
	}
}

// A user who never started the bot cannot be messaged (403), and nothing
// changes in the bot's membership: no my_chat_member update.
func TestNeverStarted(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	s.SetChat("7002", ChatBehavior{NeverStarted: true})
	got := send(s, text("7002", "escalated to you"))
	if d := decode(t, got); got.code != 403 || d.Description != "Forbidden: bot can't initiate conversation with a user" {
		t.Fatalf("send: %d %s", got.code, got.body)
	}
	if ups := getUpdates(t, s, testToken, nil); len(ups) != 0 {
		t.Errorf("%d updates, want none", len(ups))
	}
	s.SetChat("7002", ChatBehavior{})
	mustAccept(t, send(s, text("7002", "after /start")))
}
