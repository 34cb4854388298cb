package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
)

func toChat(chat string, n int) []Message {
	ms := make([]Message, n)
	for i := range ms {
		ms[i] = Message{Chat: chat, Text: fmt.Sprintf("%s #%d", chat, i)}
	}
	return ms
}

// drainFigures returns the greedy schedule and the lower bound in Telegram
// time.
func drainFigures(ms []Message) (greedy, bound time.Duration) {
	per := map[string]int{}
	var order []string
	for _, m := range ms {
		if per[m.Chat] == 0 {
			order = append(order, m.Chat)
		}
		per[m.Chat]++
	}
	var chats []drainChat
	for _, c := range order {
		ws := PrivateWindows
		if IsGroup(c) {
			ws = GroupWindows
		}
		chats = append(chats, drainChat{left: per[c], ws: ws})
	}
	return greedyDrain(chats, BotWindows), drainBound(chats, BotWindows)
}

func TestMinDrain(t *testing.T) {
	var manyChats []Message
	for c := 0; c < 100; c++ {
		manyChats = append(manyChats, toChat(strconv.Itoa(3000+c), 20)...)
	}
	s := time.Second
	for _, tc := range []struct {
		name  string
		ms    []Message
		scale float64
		want  time.Duration
		agree bool // greedy schedule equals the lower bound
	}{
		{"empty", nil, 1, 0, true},
		{"one message", toChat("1", 1), 1, 0, true},
		// 1 per second: messages at 0, 1, ..., 39 s.
		{"40 private", toChat("1001", 40), 1, 39 * s, true},
		// 1 per second and 20 per minute: messages 0-19 at 0..19 s,
		// message 20 at 60 s, ..., message 39 at 79 s.
		{"40 group", toChat("-1001000000001", 40), 1, 79 * s, true},
		{"40 @channel", toChat("@news", 40), 1, 79 * s, true},
		{"21 group", toChat("-5", 21), 1, 60 * s, true},
		// 30 per second: 2,000 = 66 × 30 + 20, the last 20 at 66 s.
		{"2000 over 100 private", manyChats, 1, 66 * s, true},
		{"31 over 31 private", func() []Message {
			var ms []Message
			for c := 0; c < 31; c++ {
				ms = append(ms, toChat(strconv.Itoa(c+1), 1)...)
			}
			return ms
		}(), 1, s, true},
		{"S1", S1(1), 1, 79 * s, true},
		{"S2", S2(1), 1, 66 * s, true},
		{"S4", S4(1), 1, 79 * s, true},
		// 3,000 = 99 × 30 + 30: the last 30 at 99 s.
		{"S5", S5(1), 1, 99 * s, true},
		// 400 = 13 × 30 + 10.
		{"PAUSED", Paused(1), 1, 13 * s, true},
		{"S2-429", S2FloodWait(1), 1, 66 * s, true},
		{"S1 at scale 10", S1(7), 10, 7900 * time.Millisecond, true},
		{"S2 at scale 10", S2(7), 10, 6600 * time.Millisecond, true},
		{"40 group at scale 10", toChat("-7", 40), 10, 7900 * time.Millisecond, true},
		{"S5 at scale 10", S5(7), 10, 9900 * time.Millisecond, true},
		{"PAUSED at scale 10", Paused(7), 10, 1300 * time.Millisecond, true},
		{"40 private at scale 3", toChat("9", 40), 3, 13 * s, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MinDrain(tc.ms, DefaultLimits(tc.scale)); got != tc.want {
				t.Errorf("MinDrain = %v, want %v", got, tc.want)
			}
			g, b := drainFigures(tc.ms)
			if tc.agree && g != b {
				t.Errorf("greedy schedule %v, lower bound %v: want them equal", g, b)
			}
			if g < b {
				t.Errorf("greedy schedule %v under the lower bound %v", g, b)
			}
		})
	}
}

// 60 chats with one message each and, last in order, one with three: the
// bot window takes 30 a second, so only a schedule that starts the longest
// chain at once ends at 2s (in order it would end at 4s).
func TestMinDrainLongestChainFirst(t *testing.T) {
	var ms []Message
	for c := 0; c < 60; c++ {
		ms = append(ms, toChat(strconv.Itoa(100+c), 1)...)
	}
	ms = append(ms, toChat("55", 3)...)
	if got := MinDrain(ms, DefaultLimits(1)); got != 2*time.Second {
		t.Fatalf("MinDrain = %v, want 2s", got)
	}
	if g, b := drainFigures(ms); g != b {
		t.Fatalf("greedy schedule %v, lower bound %v: want them equal", g, b)
	}
}

func TestS5Shape(t *testing.T) {
	ms := S5(1)
	per := map[string]int{}
	texts := map[string]bool{}
	for _, m := range ms {
		per[m.Chat]++
		if texts[m.Text] {
			t.Fatalf("duplicate text %q", m.Text)
		}
		texts[m.Text] = true
	}
	if len(ms) != 3000 || len(per) != 200 {
		t.Fatalf("S5: %d messages over %d chats, want 3000 over 200", len(ms), len(per))
	}
	for c, n := range per {
		if n < 10 || n > 20 {
			t.Fatalf("chat %s has %d messages, want 10..20", c, n)
		}
	}
	if fmt.Sprint(S5(1)) != fmt.Sprint(ms) {
		t.Fatal("S5 is not deterministic for a seed")
	}
	if p := Paused(1); len(p) != 400 {
		t.Fatalf("PAUSED: %d messages, want 400", len(p))
	}
}

func TestWorkerEnv(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		want  string
	}{
		{1, "HERALD_LIMIT_BOT=30/s HERALD_LIMIT_PRIVATE=1/s HERALD_LIMIT_GROUP=1/s,20/m HERALD_LIMIT_PRIORITY=3/s HERALD_PAUSE_BOT_MAX=10s"},
		{10, "HERALD_LIMIT_BOT=30/100ms HERALD_LIMIT_PRIVATE=1/100ms HERALD_LIMIT_GROUP=1/100ms,20/6s HERALD_LIMIT_PRIORITY=3/100ms HERALD_PAUSE_BOT_MAX=1s TELEGRAM_RETRY_AFTER_UNIT=100ms"},
		{3, "HERALD_LIMIT_BOT=30/333.333ms HERALD_LIMIT_PRIVATE=1/333.333ms HERALD_LIMIT_GROUP=1/333.333ms,20/20s HERALD_LIMIT_PRIORITY=3/333.333ms HERALD_PAUSE_BOT_MAX=3.333333s TELEGRAM_RETRY_AFTER_UNIT=333.333ms"},
		{60, "HERALD_LIMIT_BOT=30/16.667ms HERALD_LIMIT_PRIVATE=1/16.667ms HERALD_LIMIT_GROUP=1/16.667ms,20/s HERALD_LIMIT_PRIORITY=3/16.667ms HERALD_PAUSE_BOT_MAX=166.667ms TELEGRAM_RETRY_AFTER_UNIT=16.667ms"},
		{0.5, "HERALD_LIMIT_BOT=30/2s HERALD_LIMIT_PRIVATE=1/2s HERALD_LIMIT_GROUP=1/2s,20/2m HERALD_LIMIT_PRIORITY=3/2s HERALD_PAUSE_BOT_MAX=20s"},
	} {
		if got := strings.Join(DefaultLimits(tc.scale).WorkerEnv(), " "); got != tc.want {
			t.Errorf("scale %v:\n got %s\nwant %s", tc.scale, got, tc.want)
		}
	}
	for _, env := range DefaultLimits(10).WorkerEnv() {
		if strings.Contains(env, "BURST") {
			t.Errorf("%s: the burst settings are gone", env)
		}
	}
}

func TestCheckWindows(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	msg := func(chat int64, ms int) telegramfake.Message { return telegramfake.Message{ChatID: chat, At: at(ms)} }
	// Scale 10: private 1 per 100ms, group 1 per 100ms and 20 per 6s.
	ok := []telegramfake.Message{msg(1, 0), msg(1, 100), msg(2, 0), msg(1, 200)}
	for i := 0; i < 20; i++ {
		ok = append(ok, msg(-1, i*100))
	}
	ok = append(ok, msg(-1, 6000), msg(1, 299)) // the last is 1ms early: the tolerance is 0.3ms
	if v := CheckWindows(ok[:len(ok)-1], 10, 0.003); len(v) != 0 {
		t.Fatalf("want no breach, got %q", v)
	}
	if v := CheckWindows(ok, 10, 0.003); len(v) != 1 || !strings.Contains(v[0], "chat 1:") {
		t.Fatalf("want one breach of chat 1, got %q", v)
	}
	if v := CheckWindows(ok, 10, 0.02); len(v) != 0 {
		t.Fatalf("a 2%% tolerance admits 1ms early: got %q", v)
	}
	group := append([]telegramfake.Message(nil), ok[4:24]...)
	group = append(group, msg(-1, 5900))
	if v := CheckWindows(group, 10, 0.003); len(v) != 1 || !strings.Contains(v[0], "20 per 6s") {
		t.Fatalf("want one breach of the group's minute window, got %q", v)
	}
	var bot []telegramfake.Message
	for c := 0; c < 31; c++ {
		bot = append(bot, msg(int64(100+c), c))
	}
	if v := CheckWindows(bot, 10, 0.003); len(v) != 1 || !strings.Contains(v[0], "bot") {
		t.Fatalf("want one bot-wide breach, got %q", v)
	}
}

// TestCheckWindowsPerBot: Telegram's limits are per bot, so two bots may each
// send a full window at once, to the same chat too; one bot over its window
// is a breach named by the bot.
func TestCheckWindowsPerBot(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	msg := func(bot string, chat int64, ms int) telegramfake.Message {
		return telegramfake.Message{Bot: bot, ChatID: chat, At: t0.Add(time.Duration(ms) * time.Millisecond)}
	}
	var two []telegramfake.Message
	for c := 0; c < 30; c++ {
		two = append(two, msg("pages", int64(100+c), c), msg("status", int64(100+c), c))
	}
	if v := CheckWindows(two, 10, 0.003); len(v) != 0 {
		t.Fatalf("two bots with 30 each in one window: want no breach, got %q", v)
	}
	two = append(two, msg("status", 999, 40))
	if v := CheckWindows(two, 10, 0.003); len(v) != 1 || !strings.Contains(v[0], "bot status") {
		t.Fatalf("want one breach of bot status, got %q", v)
	}
}

// TestMinDrainPerBot: bots drain side by side, each within its own limits.
func TestMinDrainPerBot(t *testing.T) {
	l := DefaultLimits(1)
	one := S2(1)
	three := ForBots(one, []string{"a", "b", "c"}, 1)
	if got, want := MinDrain(three, l), MinDrain(one, l); got != want {
		t.Fatalf("three bots with an S2 each: MinDrain %v, want one S2's %v", got, want)
	}
}

// TestMinDrainPaid: with paid broadcasts Telegram's bot-wide limit is 1,000
// a second, so PAID's 20,000 messages over 10,000 chats take 19 s at best
// (20 seconds' worth, the first at 0), where 30 a second would take 666 s.
func TestMinDrainPaid(t *testing.T) {
	t.Parallel()
	ms := PaidBurst(1)
	paid := DefaultLimits(1)
	paid.Paid = PaidWindows
	if got := MinDrain(ms, paid); got != 19*time.Second {
		t.Fatalf("MinDrain with paid broadcasts = %v, want 19s", got)
	}
	if got := MinDrain(ms[:300], DefaultLimits(1)); got != 9*time.Second {
		t.Fatalf("MinDrain of 300 messages at 30/s = %v, want 9s", got)
	}
	// At scale 10 the paid second lasts 100ms.
	paid.Scale = 10
	if got := MinDrain(ms, paid); got != 1900*time.Millisecond {
		t.Fatalf("MinDrain with paid broadcasts at scale 10 = %v, want 1.9s", got)
	}
}

// TestMinSlackPaid: 60 sends 5ms apart break the free 30-a-second window
// but keep the paid one.
func TestMinSlackPaid(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	var ms []telegramfake.Message
	for i := range 60 {
		ms = append(ms, telegramfake.Message{ChatID: int64(i + 1), At: t0.Add(time.Duration(i) * 5 * time.Millisecond)})
	}
	paid := DefaultLimits(1)
	paid.Paid = PaidWindows
	if got := MinSlack(ms, DefaultLimits(1)); got >= 0 {
		t.Errorf("MinSlack against 30/s = %v, want negative", got)
	}
	if got := MinSlack(ms, paid); got != 0 {
		t.Errorf("MinSlack against 1000/s = %v, want 0 (no pair 1000 apart)", got)
	}
}
