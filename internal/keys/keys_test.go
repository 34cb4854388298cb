package keys

import (
	"strings"
	"testing"
)

// botKeys lists every key of a bot's space.
func botKeys(s Space) []string {
	return []string{s.BotLog(), s.QueueLog("default"), s.ChatTurns("@Chan"), s.ChatTurns("-1001"), s.ChatSends("1"),
		s.ChatSendsPrefix() + "1", s.BotPause(), s.ChatPause("@x"), s.PriorityLog(), s.ChatID("@x"),
		s.Reservation("abc"), s.ReservationPrefix() + "abc", s.Sent("abc"), s.Migrations(), s.DigestItemClaim("i"),
		s.Blocked("@Chan"), s.MemberUpdate("42")}
}

// TestBotKeysShareTheirSlot: a script may touch any set of one bot's keys on
// Redis Cluster, because they all carry the bot's hash tag.
func TestBotKeysShareTheirSlot(t *testing.T) {
	for _, name := range []string{"", DefaultBot, "pages", "status-2"} {
		s := Bot(name)
		want := Slot(s.BotLog())
		for _, k := range botKeys(s) {
			if !strings.Contains(k, s.HashTag()+":") {
				t.Errorf("bot %q: key %q lacks the tag %s", name, k, s.HashTag())
			}
			if got := Slot(k); got != want {
				t.Errorf("bot %q: key %q is in slot %d, want %d", name, k, got, want)
			}
		}
		if s.ChatTurns("@Chan") != s.ChatTurns("@chan") || s.ChatSends("@Chan") != s.ChatSends("@chan") {
			t.Errorf("bot %q: channel usernames must share one limit regardless of case", name)
		}
	}
}

// TestDefaultBotKeepsHeraldTag: the default bot's keys are the ones a
// single-bot Herald always used, so an upgrade finds its state.
func TestDefaultBotKeepsHeraldTag(t *testing.T) {
	if got := Bot("").BotLog(); got != "{herald}:rl:log:bot" {
		t.Errorf("default bot log = %q", got)
	}
	if Bot(DefaultBot) != Bot("") {
		t.Errorf("Bot(%q) and Bot(\"\") differ", DefaultBot)
	}
	if got := Bot("pages").Sent("t1"); got != "herald:{pages}:sent:t1" {
		t.Errorf("pages' record = %q", got)
	}
}

// TestBotsAreApart: two bots share no key, and their keys hash by their own
// tags (a Cluster can place them on different nodes).
func TestBotsAreApart(t *testing.T) {
	a, b := botKeys(Bot("pages")), botKeys(Bot("status"))
	for i := range a {
		if a[i] == b[i] {
			t.Errorf("bots share key %q", a[i])
		}
	}
	if Slot(Bot("pages").BotLog()) != Slot("asynq:{pages}:pending") {
		t.Errorf("pages' keys are not in the slot of the queue named pages")
	}
}

// TestFleetKeysShareHeraldSlot: the fleet-wide keys stay in {herald}.
func TestFleetKeysShareHeraldSlot(t *testing.T) {
	want := Slot(Tag)
	for _, k := range []string{WakeList(), WakeInbox("w1"), Idempotency("x"), Failures(), FeedState("f"), FeedSeen("f"),
		FeedLease("f"), HeartbeatRecords(), HeartbeatDeadlines(), HeartbeatOutbox()} {
		if got := Slot(k); got != want {
			t.Errorf("key %q is in slot %d, want %d", k, got, want)
		}
	}
}

func TestValidBotName(t *testing.T) {
	for name, want := range map[string]bool{
		"default": true, "pages": true, "a": true, "tenant_42": true, "status-eu": true,
		strings.Repeat("a", MaxBotName): true, strings.Repeat("a", MaxBotName+1): false,
		"": false, "Pages": false, "1pages": false, "_x": false, "pa ges": false, "pa}ges": false, "pa:ges": false, "päges": false,
	} {
		if got := ValidBotName(name); got != want {
			t.Errorf("ValidBotName(%q) = %v, want %v", name, got, want)
		}
	}
}
