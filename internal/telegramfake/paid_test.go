package telegramfake

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// paidText is a sendMessage form with allow_paid_broadcast.
func paidText(chat, txt string) url.Values {
	f := text(chat, txt)
	f.Set("allow_paid_broadcast", "true")
	return f
}

// mustRefuse fails the test unless r is a 400 whose description is want.
func mustRefuse(t *testing.T, r reply, want string) {
	t.Helper()
	if r.code != http.StatusBadRequest {
		t.Fatalf("want 400 %q, got %d: %s", want, r.code, r.body)
	}
	if d := decode(t, r); d.Description != want {
		t.Fatalf("description %q, want %q", d.Description, want)
	}
}

// countCharged counts the records marked charged.
func countCharged(ms []Message) int {
	n := 0
	for _, m := range ms {
		if m.Charged {
			n++
		}
	}
	return n
}

// TestPaidBurstUpTo1000: at one instant a bot with paid broadcasts sends
// 1000 paid messages to 1000 chats; the first 30 are free, the other 970
// cost 0.1 Star each, and the 1001st is refused by the paid window.
func TestPaidBurstUpTo1000(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: 500}})
	for i := range 1000 {
		mustAccept(t, send(s, paidText(strconv.Itoa(i+1), "paid")))
	}
	mustRetryAfter(t, send(s, paidText("5000", "the 1001st")))
	st := s.Stats()
	if st.Accepted != 1000 || st.PaidSends != 1000 || st.ChargedSends != 970 || st.StarsSpent != 97 || st.TooManyBot != 1 {
		t.Fatalf("after a paid burst of 1000: %+v", st)
	}
	if bs := st.Bots[DefaultBot]; bs.ChargedSends != 970 || bs.StarsSpent != 97 {
		t.Fatalf("the bot's own counters: %+v", bs)
	}
	ms := s.Messages()
	if n := countCharged(ms); n != 970 || ms[29].Charged || !ms[30].Charged || !ms[0].Paid {
		t.Fatalf("%d records charged (first free ones: %v %v, 31st %v)", n, ms[0].Charged, ms[29].Charged, ms[30].Charged)
	}
	// Once the bot's flood wait and the window are over, it sends again.
	clock.Advance(time.Second)
	mustAccept(t, send(s, paidText("5000", "a second later")))
}

// TestFreeSendsKeepTheFreeWindow: a send without allow_paid_broadcast is
// held to the free 30 per second, which paid sends count towards too.
func TestFreeSendsKeepTheFreeWindow(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: 10}})
	for i := range 30 {
		mustAccept(t, send(s, paidText(strconv.Itoa(i+1), "free within the limit")))
	}
	mustRetryAfter(t, send(s, text("99", "not paid")))
	if st := s.Stats(); st.ChargedSends != 0 || st.TooManyBot != 1 || st.PaidSends != 30 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestPaidKeepsChatLimits: a paid send to a chat is still limited to one
// a second.
func TestPaidKeepsChatLimits(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: 10}})
	mustAccept(t, send(s, paidText("7", "first")))
	mustRetryAfter(t, send(s, paidText("7", "second, at once")))
	for i := range 25 {
		mustAccept(t, send(s, paidText("-100"+strconv.Itoa(i), "groups")))
	}
	clock.Advance(time.Second)
	mustAccept(t, send(s, paidText("7", "a second later")))
	if st := s.Stats(); st.TooManyByChat["7"] != 1 || st.Accepted != 27 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestPaidNotEnabled: a paid send of a bot without paid broadcasts is
// refused and not delivered; its sends without the flag go as before.
func TestPaidNotEnabled(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	mustRefuse(t, send(s, paidText("1", "paid")), ErrPaidNotEnabled)
	mustAccept(t, send(s, text("1", "free")))
	st := s.Stats()
	if st.PaidRefused != 1 || st.Rejected != 1 || st.Accepted != 1 || st.PaidSends != 0 || len(s.Messages()) != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestBalanceTooLow: a balance of half a Star pays for 5 charged sends; the
// next charged one is refused, delivered to nobody and counted nowhere in
// the windows, while a paid send within the free limit needs no balance.
func TestBalanceTooLow(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: 0.5}})
	for i := range 35 {
		mustAccept(t, send(s, paidText(strconv.Itoa(i+1), "paid")))
	}
	mustRefuse(t, send(s, paidText("36", "unpaid")), ErrBalanceTooLow)
	st := s.Stats()
	if st.ChargedSends != 5 || st.StarsSpent != 0.5 || st.PaidRefused != 1 || st.Accepted != 35 || st.TooMany != 0 {
		t.Fatalf("stats: %+v", st)
	}
	// A second on, the free window has room: the send is free again.
	clock.Advance(time.Second)
	mustAccept(t, send(s, paidText("36", "free again")))
	if st := s.Stats(); st.ChargedSends != 5 || st.Accepted != 36 {
		t.Fatalf("stats a second later: %+v", st)
	}
	// Reset refills the balance from the Config.
	s.Reset()
	for i := range 35 {
		mustAccept(t, send(s, paidText(strconv.Itoa(100+i), "after reset")))
	}
}

// TestPaidSlidingCharge: paid sends one per millisecond for two seconds:
// none is refused, and every one after the first 30 is charged, as the
// free window never has room again.
func TestPaidSlidingCharge(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: 1000}})
	for i := range 2000 {
		mustAccept(t, send(s, paidText(strconv.Itoa(i+1), "steady")))
		clock.Advance(time.Millisecond)
	}
	if st := s.Stats(); st.ChargedSends != 1970 || st.TooMany != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestPaidPerBot: each bot has its own paid broadcasts and balance.
func TestPaidPerBot(t *testing.T) {
	t.Parallel()
	cfg := Config{Tokens: map[string]string{"news": "201:news", "ops": "202:ops"},
		PaidBroadcast: Paid{Enabled: true, Balance: 0.1}, PaidBroadcastByBot: map[string]Paid{"ops": {}}}
	s, _ := newFake(t, cfg)
	mustRefuse(t, call(s, "202:ops", "sendMessage", paidText("1", "ops")), ErrPaidNotEnabled)
	for i := range 31 {
		mustAccept(t, call(s, "201:news", "sendMessage", paidText(strconv.Itoa(i+1), "news")))
	}
	mustRefuse(t, call(s, "201:news", "sendMessage", paidText("99", "news")), ErrBalanceTooLow)
	st := s.Stats()
	if st.Bots["news"].ChargedSends != 1 || st.Bots["ops"].PaidRefused != 1 || st.Bots["news"].PaidRefused != 1 {
		t.Fatalf("per bot: %+v", st.Bots)
	}
}

// TestPaidPhoto: sendPhoto takes allow_paid_broadcast too.
func TestPaidPhoto(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{PaidBroadcast: Paid{Enabled: true}})
	f := url.Values{"chat_id": {"5"}, "photo": {"https://example.com/a.png"}, "allow_paid_broadcast": {"true"}}
	mustAccept(t, call(s, testToken, "sendPhoto", f))
	if ms := s.Messages(); len(ms) != 1 || !ms[0].Paid || ms[0].Photo == nil {
		t.Fatalf("records: %+v", ms)
	}
}

// TestRateLiftsTheBotLimit: a bot limit far above a client's reach lets a
// burst to distinct chats through at once.
func TestRateLiftsTheBotLimit(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Bot: Rate(100_000, time.Second)})
	for i := range 5000 {
		mustAccept(t, send(s, text(strconv.Itoa(i+1), "burst")))
	}
	if st := s.Stats(); st.Accepted != 5000 || st.TooMany != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestPaidConfigChecks: Start refuses balances below zero and settings for
// bots the fake does not serve; New reads such a balance as none.
func TestPaidConfigChecks(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{PaidBroadcast: Paid{Enabled: true, Balance: -1}},
		{PaidBroadcastByBot: map[string]Paid{"nobody": {Enabled: true}}},
	} {
		if s, err := Start(cfg); err == nil {
			_ = s.Close()
			t.Errorf("Start(%+v) accepted the config", cfg)
		} else if !strings.Contains(err.Error(), "Config.PaidBroadcast") {
			t.Errorf("Start(%+v): %v, want the field named", cfg, err)
		}
	}
	s, _ := newFake(t, Config{PaidBroadcast: Paid{Enabled: true, Balance: -1}})
	for i := range 30 {
		mustAccept(t, send(s, paidText(strconv.Itoa(i+1), "free")))
	}
	mustRefuse(t, send(s, paidText("31", "charged")), ErrBalanceTooLow)
}
