package telegramfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// memberUpdates returns the my_chat_member objects of the bot's pending
// updates, as raw JSON, confirming them.
func memberUpdates(t *testing.T, s *Server, token string) []string {
	t.Helper()
	r := call(s, token, "getUpdates", nil)
	mustAccept(t, r)
	var ups []map[string]json.RawMessage
	if err := json.Unmarshal(decode(t, r).Result, &ups); err != nil {
		t.Fatal(err)
	}
	var out []string
	last := 0
	for _, u := range ups {
		_ = json.Unmarshal(u["update_id"], &last)
		if m, ok := u["my_chat_member"]; ok {
			out = append(out, string(m))
		}
	}
	if len(ups) > 0 {
		mustAccept(t, call(s, token, "getUpdates", url.Values{"offset": {itoa(last + 1)}}))
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// botUser is the bot's User object as getMe describes it, without the
// fields only getMe carries.
func botUser(t *testing.T, s *Server, token string) string {
	t.Helper()
	var me map[string]any
	if err := json.Unmarshal(decode(t, call(s, token, "getMe", nil)).Result, &me); err != nil {
		t.Fatal(err)
	}
	u := map[string]any{}
	for _, k := range []string{"id", "is_bot", "first_name", "username"} {
		u[k] = me[k]
	}
	b, _ := json.Marshal(u)
	return string(b)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%v: %s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

// TestBlockedUserSendsMyChatMember: a user who blocks the bot and then
// unblocks it makes the two my_chat_member updates Telegram sends, from
// the user, about the bot as getMe describes it; setting the same state
// again, or Kicked after Blocked, makes none.
func TestBlockedUserSendsMyChatMember(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	bot := botUser(t, s, testToken)
	s.SetChat("42", ChatBehavior{Blocked: true})
	s.SetChat("42", ChatBehavior{Blocked: true})
	s.SetChat("42", ChatBehavior{Kicked: true})
	got := memberUpdates(t, s, testToken)
	chat := `{"id":42,"first_name":"User 42","type":"private"}`
	want := `{"chat":` + chat + `,"from":{"id":42,"is_bot":false,"first_name":"User 42"},"date":1700000000,` +
		`"old_chat_member":{"user":` + bot + `,"status":"member"},` +
		`"new_chat_member":{"user":` + bot + `,"status":"kicked","until_date":0}}`
	if len(got) != 1 || !sameJSON(t, got[0], want) {
		t.Fatalf("after blocking: my_chat_member %v\nwant [%s]", got, want)
	}
	s.SetChat("42", ChatBehavior{})
	got = memberUpdates(t, s, testToken)
	want = `{"chat":` + chat + `,"from":{"id":42,"is_bot":false,"first_name":"User 42"},"date":1700000000,` +
		`"old_chat_member":{"user":` + bot + `,"status":"kicked","until_date":0},` +
		`"new_chat_member":{"user":` + bot + `,"status":"member"}}`
	if len(got) != 1 || !sameJSON(t, got[0], want) {
		t.Fatalf("after unblocking: my_chat_member %v\nwant [%s]", got, want)
	}
	// A chat not found, or migrated, has no membership to change.
	s.SetChat("43", ChatBehavior{NotFound: true})
	s.SetChat("43", ChatBehavior{Blocked: true})
	s.SetChat("-44", ChatBehavior{MigrateTo: -10044})
	s.SetChat("-44", ChatBehavior{})
	if got := memberUpdates(t, s, testToken); len(got) != 0 {
		t.Errorf("changes to or from not found / migrated made %v", got)
	}
}

// TestRemovedFromGroupsAndChannels: a bot removed from a basic group has
// left it; from a supergroup or channel it is kicked; in a channel it was
// an administrator. The change comes from one of the chat's
// administrators.
func TestRemovedFromGroupsAndChannels(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	for _, c := range []struct {
		chat, typ, old, new string
	}{
		{"-4001", "group", "member", "left"},
		{"-1004001", "supergroup", "member", "kicked"},
		{"@Alerts_chan", "channel", "administrator", "kicked"},
	} {
		s.SetChat(c.chat, ChatBehavior{Kicked: true})
		got := memberUpdates(t, s, testToken)
		if len(got) != 1 {
			t.Fatalf("%s: my_chat_member %v, want one", c.chat, got)
		}
		var u struct {
			Chat struct {
				ID       int64  `json:"id"`
				Type     string `json:"type"`
				Username string `json:"username"`
			} `json:"chat"`
			From          User           `json:"from"`
			OldChatMember map[string]any `json:"old_chat_member"`
			NewChatMember map[string]any `json:"new_chat_member"`
		}
		if err := json.Unmarshal([]byte(got[0]), &u); err != nil {
			t.Fatal(err)
		}
		if u.Chat.Type != c.typ || u.From.ID <= 0 || u.From.IsBot || u.From.ID == u.Chat.ID {
			t.Errorf("%s: chat %+v from %+v", c.chat, u.Chat, u.From)
		}
		if u.OldChatMember["status"] != c.old || u.NewChatMember["status"] != c.new {
			t.Errorf("%s: status %v -> %v, want %s -> %s", c.chat, u.OldChatMember["status"], u.NewChatMember["status"], c.old, c.new)
		}
		if c.typ == "channel" && (u.OldChatMember["can_post_messages"] != true || u.Chat.Username != "Alerts_chan") {
			t.Errorf("%s: the bot was not a channel administrator that posts: %s", c.chat, got[0])
		}
		s.SetChat(c.chat, ChatBehavior{})
		got = memberUpdates(t, s, testToken)
		_, back, _ := strings.Cut(strings.Join(got, ""), `"new_chat_member":`)
		if len(got) != 1 || !strings.Contains(back, `"status":"`+c.old+`"`) {
			t.Errorf("%s: adding the bot back made %v", c.chat, got)
		}
	}
}

// TestMyChatMemberReachesEveryBotAsAllowed: every bot the fake serves is
// in the shared chat and is told, unless its allowed_updates leave
// my_chat_member out; the admin endpoint makes the same updates, and a
// webhook gets them posted.
func TestMyChatMemberReachesEveryBotAsAllowed(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, twoBots())
	getUpdates(t, s, tokenPages, url.Values{"allowed_updates": {`["callback_query"]`}})
	admin := httptest.NewServer(s.Handler())
	t.Cleanup(admin.Close)
	resp, err := http.Post(admin.URL+"/fake/chat?chat=42&blocked=true", "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /fake/chat: %v %v", resp, err)
	}
	resp.Body.Close()
	if got := memberUpdates(t, s, tokenAlerts); len(got) != 1 || !strings.Contains(got[0], `"status":"kicked"`) {
		t.Errorf("alerts got %v", got)
	}
	if got := memberUpdates(t, s, tokenPages); len(got) != 0 {
		t.Errorf("pages, which asked for callback_query only, got %v", got)
	}

	w, _ := newFake(t, fastHooks())
	hook := newTestHook(t)
	mustAccept(t, call(w, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	w.SetChat("42", ChatBehavior{Blocked: true})
	w.SetChat("42", ChatBehavior{})
	waitFor(t, w, "two deliveries", func() bool { st, _ := w.Updates(""); return st.Delivered == 2 })
	ids := hookIDs(hook.received())
	if len(ids) != 2 || ids[1] != ids[0]+1 || slices.Contains(ids, 0) {
		t.Errorf("webhook received updates %v", ids)
	}
}
