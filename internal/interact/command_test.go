package interact

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// oncallGroup is a supergroup that asks who is on call.
const oncallGroup = -1004242

// publishSchedules stores a schedule as the producers publish it: Alice
// on call for good, announced in oncallGroup (where /oncall is asked).
func publishSchedules(t *testing.T, h *harness) {
	t.Helper()
	src := "schedules:\n  - name: primary\n    time_zone: UTC\n    chat: \"-1004242\"\n    layers:\n      - {users: [{id: 1001, name: Alice, username: alice}], shift: weekly, handoff: \"09:00\", start: 2026-01-05}\n"
	if err := h.rdb.Set(h.ctx, keys.OnCallSchedules(), src, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// askOnCall sends /oncall in a forum topic of the group and waits for the
// bot's answer there, within 2 seconds.
func askOnCall(t *testing.T, h *harness, bot string) {
	t.Helper()
	start := time.Now()
	_, delivered, err := h.fake.Say(bot, oncallGroup, 3, telegramfake.User{ID: 555, FirstName: "Erin"}, "/oncall")
	if err != nil || !delivered {
		t.Fatalf("Say: %v, %v", delivered, err)
	}
	var answer telegramfake.Message
	h.waitFor(t, "the answer to /oncall", func() bool {
		for _, m := range h.fake.MessagesOf(bot) {
			if m.ChatID == oncallGroup && strings.HasPrefix(m.Text, "📟 primary: Alice (@alice)") {
				answer = m
				return true
			}
		}
		return false
	})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("/oncall answered after %v, want within 2s", took)
	}
	if answer.MessageThreadID != 3 {
		t.Errorf("the answer went to topic %d, want the question's (3)", answer.MessageThreadID)
	}
}

// /oncall in a chat is answered through getUpdates.
func TestOnCallCommandByGetUpdates(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	publishSchedules(t, h)
	askOnCall(t, h, "pages")
}

// /oncall in a chat is answered through the webhook.
func TestOnCallCommandByWebhook(t *testing.T) {
	t.Parallel()
	var base string
	h := setup(t, options{receiver: func(h *harness) worker.Component {
		recv, err := newReceiver(receiverConfig{Tasks: h.tasks(t), Secret: testSecret, Bots: testBots, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(WebhookPattern, recv)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		base = ts.URL
		r, err := newRegistrar(registrarConfig{Bots: h.bots, BaseURL: base + "/", Secret: testSecret, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}})
	h.waitFor(t, "the webhook", func() bool {
		st, err := h.fake.Updates("status")
		return err == nil && st.Webhook == base+"/telegram/status/updates"
	})
	publishSchedules(t, h)
	askOnCall(t, h, "status")
}

// usernameOf is the username the fake gives the bot named name.
func usernameOf(t *testing.T, h *harness, name string) string {
	t.Helper()
	for _, b := range h.fake.Bots() {
		if b.Name == name {
			return b.Username
		}
	}
	t.Fatalf("the fake serves no bot %q", name)
	return ""
}

// A command that names another bot ("/oncall@other_bot": Telegram hands
// it to every bot that reads the group's messages) is left to that bot;
// one that names this bot, in any letter case, is answered.
func TestOnCallCommandAddressedToABot(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	publishSchedules(t, h)
	erin := telegramfake.User{ID: 555, FirstName: "Erin"}
	for _, text := range []string{"/oncall@other_bot", "/oncall@" + strings.ToUpper(usernameOf(t, h, "pages")) + " primary"} {
		if _, delivered, err := h.fake.Say("pages", oncallGroup, 0, erin, text); err != nil || !delivered {
			t.Fatalf("Say(%q): %v, %v", text, delivered, err)
		}
	}
	answers := func() int {
		n := 0
		for _, m := range h.fake.MessagesOf("pages") {
			if m.ChatID == oncallGroup && strings.HasPrefix(m.Text, "📟 primary: Alice (@alice)") {
				n++
			}
		}
		return n
	}
	h.waitFor(t, "the answer to /oncall@this_bot", func() bool { return answers() > 0 })
	h.waitFor(t, "both commands handled", func() bool {
		qi, err := h.insp.GetQueueInfo("critical")
		return err == nil && qi.Pending+qi.Active+qi.Retry+qi.Scheduled == 0 && qi.Processed >= 3 // two updates, one answer
	})
	if n := answers(); n != 1 {
		t.Errorf("%d answers in the group, want 1: the command for another bot is not this bot's", n)
	}
}
