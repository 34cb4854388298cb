package producer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/producer"
)

// chatsAdminToken is the token with every scope of the blocked-chats
// tests.
const chatsAdminToken = "adm1n-token-for-tests"

// newChatsAPI is the API with the blocked-chats mounts for the bots
// default and pages, the send token testToken and chatsAdminToken.
func newChatsAPI(t *testing.T) (http.Handler, *chats.Store) {
	t.Helper()
	var store *chats.Store
	h, _ := newTestAPI(t, func(c *producer.Config) {
		store = chats.NewStore(c.Redis)
		c.Keyring = testKeyring(t, testToken, chatsAdminToken)
		c.Mounts = chats.Mounts(store, []string{"default", "pages"}, nil)
	})
	return h, store
}

// chatState decodes a 200 answer.
func chatState(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if rec.Code != http.StatusOK || !isJSON(rec) {
		t.Fatalf("status %d (%s), want a 200 JSON answer: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func asAdmin() http.Header { return hdr("Authorization", "Bearer "+chatsAdminToken) }

// TestChatsAPI: GET shows a chat's state to a sender's token; DELETE
// .../block clears the mark for a token with the operate scope only.
func TestChatsAPI(t *testing.T) {
	t.Parallel()
	h, store := newChatsAPI(t)
	ctx := context.Background()

	got := chatState(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages/42"}))
	if got["bot"] != "pages" || got["chat"] != "42" || got["blocked"] != false || got["since"] != nil {
		t.Errorf("a chat never blocked: %v", got)
	}

	since := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	if _, err := store.Block(ctx, "pages", "42", chats.Block{Since: since, Reason: chats.ReasonBlocked,
		Source: chats.SourceTelegram403, Error: "Forbidden: bot was blocked by the user"}); err != nil {
		t.Fatal(err)
	}
	got = chatState(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages/+42"}))
	want := map[string]any{"bot": "pages", "chat": "42", "blocked": true, "since": "2025-05-01T08:00:00Z",
		"reason": "blocked", "source": "telegram_403", "error": "Forbidden: bot was blocked by the user"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v (answer %v)", k, got[k], w, got)
		}
	}
	// The other bot's view of the chat is its own.
	if got := chatState(t, do(h, request{method: http.MethodGet, path: "/v1/chats/default/42"})); got["blocked"] != false {
		t.Errorf("default sees pages' block: %v", got)
	}

	// A sender's token may not clear what Telegram said.
	errorBody(t, do(h, request{method: http.MethodDelete, path: "/v1/chats/pages/42/block"}), http.StatusForbidden, "forbidden")
	if st, _ := store.Get(ctx, "pages", "42"); !st.Blocked {
		t.Fatal("a sender's DELETE cleared the mark")
	}
	got = chatState(t, do(h, request{method: http.MethodDelete, path: "/v1/chats/pages/42/block", header: asAdmin()}))
	if got["blocked"] != false || got["was_blocked"] != true || got["bot"] != "pages" || got["chat"] != "42" {
		t.Errorf("DELETE answered %v", got)
	}
	if st, _ := store.Get(ctx, "pages", "42"); st.Blocked {
		t.Fatal("the mark survived the DELETE")
	}
	got = chatState(t, do(h, request{method: http.MethodDelete, path: "/v1/chats/pages/42/block", header: asAdmin()}))
	if got["was_blocked"] != false {
		t.Errorf("a second DELETE answered %v", got)
	}

	// Channels by @username, in any letter case.
	if _, err := store.Block(ctx, "default", "@alerts_chan", chats.Block{Reason: chats.ReasonKicked, Source: chats.SourceMyChatMember}); err != nil {
		t.Fatal(err)
	}
	if got := chatState(t, do(h, request{method: http.MethodGet, path: "/v1/chats/default/@Alerts_Chan"})); got["blocked"] != true || got["reason"] != "kicked" {
		t.Errorf("GET by @username: %v", got)
	}
}

// TestChatsAPIErrors: an unknown bot is a 404 naming HERALD_BOTS, a bad
// chat a 400 naming the field, other methods 405, no token 401.
func TestChatsAPIErrors(t *testing.T) {
	t.Parallel()
	h, _ := newChatsAPI(t)
	eb := errorBody(t, do(h, request{method: http.MethodGet, path: "/v1/chats/nobot/42"}), http.StatusNotFound, "not_found")
	if !strings.Contains(eb.Error.Message, "HERALD_BOTS lists default, pages") {
		t.Errorf("unknown bot: %q", eb.Error.Message)
	}
	errorBody(t, do(h, request{method: http.MethodDelete, path: "/v1/chats/nobot/42/block", header: asAdmin()}), http.StatusNotFound, "not_found")
	for _, chat := range []string{"abc", "0", "@ab", "4x"} {
		eb := errorBody(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages/" + chat}), http.StatusBadRequest, "invalid_field")
		if msg := fieldMessages(eb)["chat"]; msg == "" {
			t.Errorf("chat %q: fields %+v, want one naming chat", chat, eb.Error.Fields)
		}
	}
	rec := do(h, request{method: http.MethodPost, path: "/v1/chats/pages/42"})
	errorBody(t, rec, http.StatusMethodNotAllowed, "method_not_allowed")
	if rec.Header().Get("Allow") != "GET" {
		t.Errorf("Allow %q", rec.Header().Get("Allow"))
	}
	errorBody(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages/42/block"}), http.StatusMethodNotAllowed, "method_not_allowed")
	errorBody(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages/42", noAuth: true}), http.StatusUnauthorized, "unauthorized")
	errorBody(t, do(h, request{method: http.MethodGet, path: "/v1/chats/pages"}), http.StatusNotFound, "not_found")
}

// TestChatCommands: `producer chat` prints a chat's state, `producer
// unblock` clears it; bad arguments exit 2 with one line naming the
// problem.
func TestChatCommands(t *testing.T) {
	t.Parallel()
	_, store := newChatsAPI(t)
	ctx := context.Background()
	bots := []string{"default", "pages"}
	run := func(cmd string, args ...string) (int, string, string) {
		var out, errs bytes.Buffer
		code := producer.ChatCommand(ctx, cmd, store, bots, args, &out, &errs)
		return code, out.String(), errs.String()
	}
	if _, err := store.Block(ctx, "pages", "-1001", chats.Block{Reason: chats.ReasonKicked, Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run("chat", "pages", "-1001")
	if code != 0 || !strings.Contains(out, `"blocked":true`) || !strings.Contains(out, `"reason":"kicked"`) {
		t.Errorf("producer chat: %d %q", code, out)
	}
	code, out, _ = run("unblock", "pages", "-1001")
	if code != 0 || !strings.Contains(out, `"was_blocked":true`) {
		t.Errorf("producer unblock: %d %q", code, out)
	}
	if st, _ := store.Get(ctx, "pages", "-1001"); st.Blocked {
		t.Error("producer unblock left the mark")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pages"}, "want BOT and CHAT"},
		{[]string{"nobot", "42"}, `no bot "nobot": HERALD_BOTS lists default, pages`},
		{[]string{"pages", "abc"}, "chat"},
	} {
		code, _, errs := run("chat", c.args...)
		if code != producer.ExitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "producer chat: ") {
			t.Errorf("producer chat %v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}

	// Redis gone: exit 1, safe to retry.
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	mr.Close()
	var errs bytes.Buffer
	if code := producer.ChatCommand(ctx, "unblock", chats.NewStore(rdb), bots, []string{"pages", "42"}, &bytes.Buffer{}, &errs); code != producer.ExitNotStored ||
		!strings.HasPrefix(errs.String(), "producer unblock: ") {
		t.Errorf("Redis gone: exit %d, stderr %q; want 1", code, errs.String())
	}
}
