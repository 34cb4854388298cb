package interact

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// TestMembershipThroughPoller: the chats that block or remove the bots,
// and take them back, are marked and cleared from the my_chat_member
// updates the poller fetches.
func TestMembershipThroughPoller(t *testing.T) {
	t.Parallel()
	h := setup(t, options{poller: true})
	h.followMembership(t)
}

// TestMembershipThroughWebhook: the same through the webhooks the workers
// set and the producer's receiver.
func TestMembershipThroughWebhook(t *testing.T) {
	t.Parallel()
	h := setup(t, options{receiver: func(h *harness) worker.Component {
		recv, err := newReceiver(receiverConfig{Tasks: h.tasks(t), Secret: testSecret, Bots: testBots, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(WebhookPattern, recv)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		r, err := newRegistrar(registrarConfig{Bots: h.bots, BaseURL: ts.URL, Secret: testSecret, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}})
	for _, bot := range testBots {
		h.waitFor(t, bot+"'s webhook", func() bool { st, err := h.fake.Updates(bot); return err == nil && st.Webhook != "" })
	}
	h.followMembership(t)
}

// followMembership blocks and unblocks chats through the fake's admin
// endpoint and checks what the store says after each step.
func (h *harness) followMembership(t *testing.T) {
	t.Helper()
	for _, bot := range testBots {
		h.waitFor(t, bot+" to ask for my_chat_member", func() bool {
			st, err := h.fake.Updates(bot)
			return err == nil && slices.Equal(st.AllowedUpdates, []string{"callback_query", "my_chat_member", "message"})
		})
	}
	admin := telegramfake.Remote{URL: h.fake.URL()}
	set := func(chat string, b telegramfake.ChatBehavior) {
		t.Helper()
		if err := admin.SetChat(h.ctx, chat, b); err != nil {
			t.Fatal(err)
		}
	}
	state := func(bot, chat string) chats.State {
		t.Helper()
		st, err := h.chats.Get(h.ctx, bot, chat)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	until := func(what string, blocked bool, chatNames ...string) {
		t.Helper()
		h.waitFor(t, what, func() bool {
			for _, bot := range testBots {
				for _, c := range chatNames {
					if state(bot, c).Blocked != blocked {
						return false
					}
				}
			}
			return true
		})
	}

	// A user blocks both bots, then unblocks them.
	before := time.Now().Add(-time.Second)
	set(testChat, telegramfake.ChatBehavior{Blocked: true})
	until("the user's block", true, testChat)
	st := state("pages", testChat)
	if st.Reason != chats.ReasonBlocked || st.Source != chats.SourceMyChatMember || st.Since == nil || st.Since.Before(before.Truncate(time.Second)) {
		t.Errorf("blocked chat %+v; want reason blocked from my_chat_member, since the update's date", st)
	}
	set(testChat, telegramfake.ChatBehavior{})
	until("the user's unblock", false, testChat)

	// A channel removes the bots: its id and its @username both stop.
	channel := channelID(t, h, "@Alerts_chan")
	set("@Alerts_chan", telegramfake.ChatBehavior{Kicked: true})
	until("the channel's removal", true, "@alerts_chan", channel)
	if st := state("status", "@Alerts_chan"); st.Reason != chats.ReasonKicked {
		t.Errorf("removed from a channel: %+v", st)
	}
	set("@Alerts_chan", telegramfake.ChatBehavior{})
	until("the channel taking the bots back", false, "@alerts_chan", channel)

	// A chat a 403 marked first: the update finds it blocked (nothing to
	// report for pages), and the user's unblock clears it.
	if _, err := h.chats.Block(h.ctx, "pages", "77", chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	set("77", telegramfake.ChatBehavior{Blocked: true})
	until("the block of 77", true, "77")
	set("77", telegramfake.ChatBehavior{})
	until("the unblock of 77", false, "77")

	got := h.hooked.list()
	slices.Sort(got)
	want := []string{"pages " + testChat + " blocked", "pages " + channel + " kicked",
		"status " + testChat + " blocked", "status " + channel + " kicked", "status 77 blocked"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("OnBlocked was told %q, want %q", got, want)
	}
	blocks := (metricOf(t, h, "herald_chat_blocks_total", "pages", chats.SourceMyChatMember))
	unblocks := (metricOf(t, h, "herald_chat_unblocks_total", "pages", chats.SourceMyChatMember))
	if blocks != 2 || unblocks != 3 {
		t.Errorf("pages: %v blocks and %v unblocks counted from updates, want 2 and 3", blocks, unblocks)
	}
}

// channelID is the numeric id the fake gives the channel @name (getChat).
func channelID(t *testing.T, h *harness, name string) string {
	t.Helper()
	c, ok := h.bots["pages"].(*telegram.Client)
	if !ok {
		t.Fatal("the bot pages is not a *telegram.Client")
	}
	id, err := c.ChatID(h.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

// metricOf is the counter name{bot, source} on the harness's registry.
func metricOf(t *testing.T, h *harness, name, bot, source string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() != name {
				continue
			}
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["bot"] == bot && l["source"] == source {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestBlockOf: each status the Bot API documents marks the chat blocked
// (with why) or clears it; others change nothing.
func TestBlockOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, status string
		isMember    bool
		reason      string // "" clears the mark
		known       bool
	}{
		{"private", "kicked", false, chats.ReasonBlocked, true},
		{"private", "member", false, "", true},
		{"group", "left", false, chats.ReasonLeft, true},
		{"supergroup", "kicked", false, chats.ReasonKicked, true},
		{"supergroup", "restricted", false, chats.ReasonLeft, true},
		{"supergroup", "restricted", true, "", true},
		{"channel", "administrator", false, "", true},
		{"group", "creator", false, "", true},
		{"group", "sleeping", false, "", false},
	} {
		m := &telegram.ChatMemberUpdated{Date: 1_700_000_000, NewChatMember: telegram.ChatMember{Status: c.status, IsMember: c.isMember}}
		m.Chat.ID, m.Chat.Type = -5, c.typ
		b, known := blockOf(m)
		reason := ""
		if b != nil {
			reason = b.Reason
			if b.Source != chats.SourceMyChatMember || b.Since.Unix() != 1_700_000_000 {
				t.Errorf("%s %s: block %+v", c.typ, c.status, b)
			}
		}
		if reason != c.reason || known != c.known {
			t.Errorf("%s %s (is_member %v): reason %q known %v, want %q %v", c.typ, c.status, c.isMember, reason, known, c.reason, c.known)
		}
	}
}
