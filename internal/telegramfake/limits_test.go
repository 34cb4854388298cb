package telegramfake

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unlimited switches a rule off.
var unlimited = Unlimited

// per is a one-window limit.
func per(n int, d time.Duration) limit { return limit{{N: n, Per: d}} }

func TestPrivateChatStrictWindow(t *testing.T) {
	t.Parallel()
	// One a second with 0.3% tolerance: the second send is admitted from
	// +997ms on.
	s, clock := newFake(t, Config{})
	mustAccept(t, send(s, text("41", "first")))
	clock.Advance(997 * time.Millisecond)
	mustAccept(t, send(s, text("41", "within tolerance")))

	s, clock = newFake(t, Config{})
	mustAccept(t, send(s, text("42", "first")))
	clock.Advance(996 * time.Millisecond)
	if retry := mustRetryAfter(t, send(s, text("42", "too early"))); retry != 1 {
		t.Errorf("retry_after %d, want 1", retry)
	}
	if st := s.Stats(); st.TooMany != 1 || st.TooManyByChat["42"] != 1 || st.TooManyBot != 0 || st.Accepted != 1 || st.InsideWait != 0 {
		t.Errorf("stats after one chat 429: %+v", st)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("the refused message was recorded: %d messages", n)
	}
	// The window admits again at +997ms, but the announced wait runs to
	// +1996ms: until then every request to the chat is refused.
	clock.Advance(time.Millisecond)
	if retry := mustRetryAfter(t, send(s, text("42", "inside the wait"))); retry != 1 {
		t.Errorf("retry_after inside the wait %d, want 1", retry)
	}
	clock.Advance(998 * time.Millisecond) // +1995ms
	mustRetryAfter(t, send(s, text("42", "still inside")))
	// Another chat is not held back by this one's wait.
	mustAccept(t, send(s, text("43", "other chat")))
	if st := s.Stats(); st.InsideWait != 2 || st.InsideWaitBot != 0 || st.TooManyByChat["42"] != 3 || st.TooMany != 3 {
		t.Errorf("stats inside the wait: %+v", st)
	}
	clock.Advance(time.Millisecond) // +1996ms: the announced end
	mustAccept(t, send(s, text("42", "after the wait")))
}

func TestGroupWindows(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	const group = "-100900"
	for i := range 20 {
		mustAccept(t, send(s, text(group, "msg "+strconv.Itoa(i))))
		clock.Advance(time.Second)
	}
	// At +20s the 20-a-minute window is full until 60s×0.997 after the
	// first send: a wait of 39.82s, announced as 40.
	if retry := mustRetryAfter(t, send(s, text(group, "21st"))); retry != 40 {
		t.Errorf("retry_after %d, want 40", retry)
	}
	clock.Advance(39 * time.Second)
	if retry := mustRetryAfter(t, send(s, text(group, "at 59s"))); retry != 1 {
		t.Errorf("retry_after at 59s %d, want 1", retry)
	}
	clock.Advance(time.Second) // 60s after the first
	mustAccept(t, send(s, text(group, "at 60s")))
	if st := s.Stats(); st.InsideWait != 1 || st.TooManyByChat[group] != 2 {
		t.Errorf("stats %+v", st)
	}

	// One a second holds in groups too.
	s, clock = newFake(t, Config{})
	mustAccept(t, send(s, text("-5", "a")))
	clock.Advance(500 * time.Millisecond)
	if retry := mustRetryAfter(t, send(s, text("-5", "b"))); retry != 1 {
		t.Errorf("retry_after %d, want 1", retry)
	}
}

func TestGroupLimitAtTimeScale(t *testing.T) {
	t.Parallel()
	// 20 a minute run 60 times faster: a minute lasts a real second.
	s, clock := newFake(t, Config{Group: per(20, time.Minute), TimeScale: 60})
	if got, want := s.RetryAfterUnit(), time.Second/60+1; got != want {
		t.Errorf("RetryAfterUnit %v, want %v", got, want)
	}
	for i := range 20 {
		mustAccept(t, send(s, text("-100900", "msg "+strconv.Itoa(i))))
	}
	retry := mustRetryAfter(t, send(s, text("-100900", "one too many")))
	if retry != 60 {
		t.Errorf("retry_after %d, want 60 (the window in Telegram seconds)", retry)
	}
	clock.Advance(time.Duration(retry-1) * s.RetryAfterUnit())
	mustRetryAfter(t, send(s, text("-100900", "still early")))
	clock.Advance(s.RetryAfterUnit())
	mustAccept(t, send(s, text("-100900", "after retry_after")))
	if got := s.Stats().TooManyByChat["-100900"]; got != 2 {
		t.Errorf("TooManyByChat[-100900] = %d, want 2", got)
	}
}

func TestGroupLimitRealClock(t *testing.T) {
	t.Parallel()
	// On the real clock the count before the first 429 depends on how fast
	// the requests run, so only the behaviour is checked: the limit bites
	// after at least the window's 20 sends, and waiting retry_after units
	// is always enough.
	s := startFake(t, Config{Group: per(20, time.Minute), TimeScale: 60})
	ctx := context.Background()
	accepted, retry := 0, 0
	for i := 0; i < 200 && retry == 0; i++ {
		resp, body, err := postHTTP(ctx, s, "sendMessage", text("-100901", "m"))
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			accepted++
		case http.StatusTooManyRequests:
			retry = mustRetryAfter(t, reply{code: resp.StatusCode, body: string(body)})
		default:
			t.Fatalf("unexpected %d: %s", resp.StatusCode, body)
		}
	}
	if retry == 0 || accepted < 20 {
		t.Fatalf("accepted %d before a 429 (retry_after %d); want a 429 after at least 20", accepted, retry)
	}
	<-time.After(time.Duration(retry) * s.RetryAfterUnit())
	resp, body, err := postHTTP(ctx, s, "sendMessage", text("-100901", "after wait"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after waiting retry_after: %v %s", err, body)
	}
}

func TestBotLimitAcrossChats(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	for i := range 30 {
		mustAccept(t, send(s, text(strconv.Itoa(100+i), "x")))
	}
	if retry := mustRetryAfter(t, send(s, text("200", "31st chat"))); retry != 1 {
		t.Errorf("retry_after %d, want 1", retry)
	}
	st := s.Stats()
	if st.TooManyBot != 1 || len(st.TooManyByChat) != 0 || st.InsideWait != 0 {
		t.Errorf("a bot-wide 429 must not count against a chat: %+v", st)
	}
	// The window admits again at +997ms, but the bot's wait runs to +1s
	// and covers every chat, fresh ones and unreadable ones included.
	clock.Advance(997 * time.Millisecond)
	mustRetryAfter(t, send(s, text("300", "fresh chat")))
	mustRetryAfter(t, send(s, text("-100300", "fresh group")))
	mustRetryAfter(t, send(s, text("not-a-chat", "x")))
	mustAccept(t, call(s, testToken, "getMe", nil))
	mustAccept(t, call(s, testToken, "getChat", url.Values{"chat_id": {"300"}}))
	st = s.Stats()
	if st.InsideWait != 3 || st.InsideWaitBot != 3 || st.TooManyBot != 4 || len(st.TooManyByChat) != 0 {
		t.Errorf("stats inside the bot wait: %+v", st)
	}
	clock.Advance(3 * time.Millisecond)
	mustAccept(t, send(s, text("300", "after the wait")))
}

func TestBotAndChatWaitsTogether(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Bot: per(2, time.Second), Private: per(1, time.Minute)})
	mustAccept(t, send(s, text("1", "a")))
	if retry := mustRetryAfter(t, send(s, text("1", "b"))); retry != 60 { // chat wait to +60s
		t.Errorf("chat retry_after %d, want 60", retry)
	}
	clock.Advance(time.Millisecond)
	mustAccept(t, send(s, text("2", "c")))
	mustRetryAfter(t, send(s, text("3", "d"))) // bot wait to +1.001s
	// Chat 1 is inside both waits: charged to the bot, told the longer one.
	if retry := mustRetryAfter(t, send(s, text("1", "e"))); retry != 60 {
		t.Errorf("retry_after inside both waits %d, want 60", retry)
	}
	st := s.Stats()
	if st.TooManyBot != 2 || st.TooManyByChat["1"] != 1 || st.InsideWait != 1 || st.InsideWaitBot != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestLimitOrder(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Bot: per(2, time.Second), Private: per(1, time.Minute)})
	mustAccept(t, send(s, text("1", "a")))
	mustRetryAfter(t, send(s, text("1", "b"))) // chat limit; must not use bot capacity
	mustAccept(t, send(s, text("2", "c")))
	// The bot-wide rule is full now and refuses a fresh chat.
	mustRetryAfter(t, send(s, text("4", "d")))
	st := s.Stats()
	if st.TooManyBot != 1 || st.TooManyByChat["1"] != 1 {
		t.Errorf("want one chat 429 then one bot 429, got %+v", st)
	}
	// A flood wait comes before both.
	clock.Advance(time.Minute)
	s.Force429(time.Hour)
	if retry := mustRetryAfter(t, send(s, text("3", "e"))); retry != 3600 {
		t.Errorf("flood retry_after %d, want 3600", retry)
	}
	if st := s.Stats(); st.TooManyFlood != 1 || st.TooManyBot != 1 || st.TooMany != 3 {
		t.Errorf("flood 429 counted wrongly: %+v", st)
	}
}

func TestChannelSharesScopeAcrossNames(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	id := idOf("@herald_alerts")
	mustAccept(t, send(s, text("@Herald_Alerts", "by name")))
	clock.Advance(500 * time.Millisecond)
	mustRetryAfter(t, send(s, text(id, "by id")))                            // announces the wait
	mustRetryAfter(t, send(s, text("@herald_alerts", "by lower-case name"))) // inside it
	key, err := s.ChatKey(id)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if key != "@herald_alerts" || st.TooManyByChat[key] != 2 || len(st.TooManyByChat) != 1 || st.InsideWait != 1 {
		t.Errorf("key %q, stats %+v", key, st)
	}
	if got := s.Messages()[0]; got.ChatUsername != "Herald_Alerts" || strconv.FormatInt(got.ChatID, 10) != id {
		t.Errorf("recorded %+v", got)
	}
	// The numeric id first, then the name: still one scope.
	s, _ = newFake(t, Config{})
	mustAccept(t, send(s, text(idOf("@other"), "by id")))
	mustRetryAfter(t, send(s, text("@Other", "by name")))
}

func TestGetChat(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	id := idOf("@herald_alerts")
	want := `{"ok":true,"result":{"id":` + id + `,"title":"Herald_Alerts","username":"Herald_Alerts","type":"channel",` +
		`"accent_color_id":0,"max_reaction_count":11}}`
	for _, chat := range []string{"@Herald_Alerts", "@herald_alerts", id} {
		got := call(s, testToken, "getChat", url.Values{"chat_id": {chat}})
		if got.code != http.StatusOK || got.body != want {
			t.Errorf("getChat %s: %d %s\nwant %s", chat, got.code, got.body, want)
		}
	}
	for chat, wantChat := range map[string]string{
		"42":      `{"id":42,"first_name":"User 42","type":"private"}`,
		"-4321":   `{"id":-4321,"title":"Group -4321","type":"group"}`,
		"-100123": `{"id":-100123,"title":"Supergroup -100123","type":"supergroup"}`,
	} {
		got := call(s, testToken, "GETCHAT", url.Values{"chat_id": {chat}})
		var d struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(got.body), &d); err != nil || !d.OK {
			t.Fatalf("getChat %s: %d %s", chat, got.code, got.body)
		}
		var full, short map[string]any
		_ = json.Unmarshal(d.Result, &full)
		_ = json.Unmarshal([]byte(wantChat), &short)
		for k, v := range short {
			if full[k] != v {
				t.Errorf("getChat %s: %s = %v, want %v (%s)", chat, k, full[k], v, got.body)
			}
		}
	}

	notFound := `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`
	s.SetChat("-77", ChatBehavior{NotFound: true})
	s.SetChat("43", ChatBehavior{Blocked: true})
	for _, chat := range []string{"-77", "nobody", "@no-dashes", "0"} {
		if got := call(s, testToken, "getChat", url.Values{"chat_id": {chat}}); got.code != 400 || got.body != notFound {
			t.Errorf("getChat %s: %d %s", chat, got.code, got.body)
		}
	}
	if got := call(s, testToken, "getChat", url.Values{}); got.code != 400 {
		t.Errorf("getChat without chat_id: %d %s", got.code, got.body)
	}
	mustAccept(t, call(s, testToken, "getChat", url.Values{"chat_id": {"43"}}))

	// getChat never counts against the send limits.
	for range 50 {
		mustAccept(t, call(s, testToken, "getChat", url.Values{"chat_id": {"42"}}))
	}
	mustAccept(t, send(s, text("42", "x")))
	st := s.Stats()
	if st.Requests != 3+3+4+1+1+50+1 || st.TooMany != 0 || st.Accepted != 1 || st.Rejected != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestLenientAdmitsOneMore(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Lenient: true})
	mustAccept(t, send(s, text("42", "1")))
	mustAccept(t, send(s, text("42", "2")))
	mustRetryAfter(t, send(s, text("42", "3")))
	for i := range 21 {
		mustAccept(t, send(s, text("-100900", strconv.Itoa(i))))
		clock.Advance(500 * time.Millisecond) // two a second: N+1 of the 1/s window
	}
	mustRetryAfter(t, send(s, text("-100900", "22nd")))

	// The bot window admits 2×30.
	s, _ = newFake(t, Config{Lenient: true})
	for i := range 60 {
		mustAccept(t, send(s, text(strconv.Itoa(1000+i), "x")))
	}
	mustRetryAfter(t, send(s, text("2000", "61st")))
}

func TestToleranceSetting(t *testing.T) {
	t.Parallel()
	// No tolerance: the window must have fully passed.
	s, clock := newFake(t, Config{Tolerance: -1})
	mustAccept(t, send(s, text("42", "a")))
	mustAccept(t, send(s, text("43", "a")))
	clock.Advance(time.Second - 1)
	mustRetryAfter(t, send(s, text("42", "b")))
	clock.Advance(1)
	mustAccept(t, send(s, text("43", "b")))
	// The largest tolerance: 5ms of a second.
	s, clock = newFake(t, Config{Tolerance: 0.01})
	mustAccept(t, send(s, text("42", "a")))
	clock.Advance(995 * time.Millisecond)
	mustAccept(t, send(s, text("42", "b")))

	if _, err := Start(Config{Tolerance: 0.006}); err == nil {
		t.Error("Start accepted Tolerance 0.006")
	}
	if _, err := Start(Config{Group: limit{{N: 0, Per: time.Second}}}); err == nil {
		t.Error("Start accepted a window with N 0")
	}
	if got := (Config{Tolerance: 0.01}).withDefaults().Tolerance; got != maxTolerance {
		t.Errorf("New kept Tolerance %v, want it clamped to %v", got, maxTolerance)
	}
}

func TestPenaltyPunishesFlooding(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Penalty: 2 * time.Second})
	mustAccept(t, send(s, text("42", "a")))
	first := mustRetryAfter(t, send(s, text("42", "b")))
	second := mustRetryAfter(t, send(s, text("42", "c"))) // sent inside the wait
	if first != 1 || second != 3 {
		t.Errorf("retry_after %d then %d, want 1 then 3", first, second)
	}
	clock.Advance(time.Duration(first) * s.RetryAfterUnit())
	mustRetryAfter(t, send(s, text("42", "d"))) // the first wait no longer suffices
	if st := s.Stats(); st.Penalties != 2 || st.InsideWait != 2 {
		t.Errorf("Penalties %d, InsideWait %d, want 2 and 2", st.Penalties, st.InsideWait)
	}
}

func TestNoPenaltyByDefault(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	mustAccept(t, send(s, text("42", "a")))
	for range 5 {
		if retry := mustRetryAfter(t, send(s, text("42", "flood"))); retry != 1 {
			t.Fatalf("retry_after grew to %d without a Penalty", retry)
		}
	}
	clock.Advance(s.RetryAfterUnit())
	mustAccept(t, send(s, text("42", "b")))
	if st := s.Stats(); st.InsideWait != 4 || st.Penalties != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLimitsOff(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Bot: unlimited, Private: unlimited, Group: unlimited})
	for i := range 100 {
		mustAccept(t, send(s, text("42", strconv.Itoa(i))))
		mustAccept(t, send(s, text("-1001", strconv.Itoa(i))))
	}
}

func TestRetryAfterCoversWait(t *testing.T) {
	t.Parallel()
	for _, scale := range []float64{1, 3, 7, 60, 1000, 1e6} {
		s := New(Config{TimeScale: scale})
		for _, wait := range []time.Duration{1, 999, time.Millisecond, 16666667, 50 * time.Millisecond, 2*time.Second + 1, time.Minute} {
			n := s.retryAfterSeconds(wait)
			if n < 1 || time.Duration(n)*s.RetryAfterUnit() < wait || float64(n)/scale*float64(time.Second) < float64(wait) {
				t.Errorf("scale %v wait %v: retry_after %d is too short", scale, wait, n)
			}
		}
	}
}

func TestClientHonouringRetryAfterIsNeverInside(t *testing.T) {
	t.Parallel()
	// A client that sends as fast as it is allowed and sleeps exactly
	// retry_after units after each 429 never lands inside a wait.
	for _, scale := range []float64{1, 7, 60} {
		s, clock := newFake(t, Config{TimeScale: scale})
		for i := range 200 {
			if r := send(s, text("-100900", strconv.Itoa(i))); r.code == http.StatusTooManyRequests {
				clock.Advance(time.Duration(mustRetryAfter(t, r)) * s.RetryAfterUnit())
			} else {
				mustAccept(t, r)
			}
		}
		if st := s.Stats(); st.InsideWait != 0 || st.Accepted < 50 {
			t.Errorf("scale %v: %+v", scale, st)
		}
	}
}

func TestLimiterForgetsIdleChats(t *testing.T) {
	t.Parallel()
	l := newLimiter(Config{}.withDefaults())
	now := epoch
	for i := range minSweep + 10 {
		if v := l.admit(now, int64(i+1), nil); v.scope != scopeNone {
			t.Fatalf("chat %d refused", i+1)
		}
		now = now.Add(time.Second) // keep the bot-wide rule quiet
	}
	if len(l.chats) > minSweep {
		t.Errorf("%d chat scopes kept; idle ones should have been dropped", len(l.chats))
	}
	// A chat keeps a bounded number of send times: at least as many as its
	// widest window, at most four times that (scope.push).
	for range 100 {
		now = now.Add(time.Minute)
		l.admit(now, -5, nil)
	}
	if n := len(l.chats[-5].times); n < 20 || n > 80 {
		t.Errorf("group scope keeps %d send times, want 20 to 80", n)
	}
	// The bot's widest window is the paid one's 1000.
	if n := len(l.botScope.times); n < 1000 || n > 4000 {
		t.Errorf("bot scope keeps %d send times, want 1000 to 4000", n)
	}
}

// TestLimiterCountsEachSendAtItsArrival: a send the server gets to after a
// later one (its goroutine ran late) is counted at its own arrival, in its
// place among the others, not moved up to the later one: moved, it would
// stand closer to the sends a window after it than it came, and refuse
// them.
func TestLimiterCountsEachSendAtItsArrival(t *testing.T) {
	t.Parallel()
	l := newLimiter(Config{Bot: limit{{N: 2, Per: time.Second}}}.withDefaults())
	at := func(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }
	for i, c := range []struct {
		ms   int
		want limitScope
	}{
		{0, scopeNone},
		{1200, scopeNone},
		{500, scopeNone},  // arrived before the send at 1200, counted after it
		{1600, scopeNone}, // 1.1 s after the send at 500, the second before it
		{1700, scopeBot},  // the third in the second from 1200
	} {
		if v := l.admit(at(c.ms), int64(100+i), nil); v.scope != c.want {
			t.Errorf("send at %d ms: scope %v, want %v", c.ms, v.scope, c.want)
		}
	}
	// A late-read send that the ones counted around it leave no room for
	// is refused.
	l = newLimiter(Config{Bot: limit{{N: 2, Per: time.Second}}}.withDefaults())
	for i, ms := range []int{0, 900} {
		if v := l.admit(at(ms), int64(200+i), nil); v.scope != scopeNone {
			t.Fatalf("send at %d ms refused", ms)
		}
	}
	if v := l.admit(at(200), 300, nil); v.scope != scopeBot {
		t.Errorf("a third send between two 900 ms apart was admitted (%v)", v.scope)
	}
}

func TestLimitDefaults(t *testing.T) {
	t.Parallel()
	cfg := Config{}.withDefaults()
	for _, tc := range []struct {
		got, want limit
	}{
		{cfg.Private, limit{{1, time.Second}}},
		{cfg.Group, limit{{1, time.Second}, {20, time.Minute}}},
		{cfg.Bot, limit{{30, time.Second}}},
		{limit{{N: 0, Per: 0}}.orDefault(defaultBotLimit), limit{{1, time.Second}}},
		{Unlimited.orDefault(defaultBotLimit), limit{}},
	} {
		if len(tc.got) != len(tc.want) || tc.got.Off() != tc.want.Off() {
			t.Errorf("got %v, want %v", tc.got, tc.want)
			continue
		}
		for i := range tc.got {
			if tc.got[i] != tc.want[i] {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		}
	}
	if cfg.Tolerance != DefaultTolerance || cfg.Lenient {
		t.Errorf("Tolerance %v Lenient %v", cfg.Tolerance, cfg.Lenient)
	}
	// The defaults are copied, not shared.
	cfg.Group[0].N = 99
	if defaultGroupLimit[0].N != 1 {
		t.Error("Config shares DefaultGroupLimit")
	}
}

func TestWaitComesBeforeFaults(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	mustAccept(t, send(s, text("42", "a")))
	mustRetryAfter(t, send(s, text("42", "b"))) // announces the wait
	s.FailNext(1, FaultServerError)
	mustRetryAfter(t, send(s, text("42", "c"))) // inside: the fault stays queued
	if got := send(s, text("43", "d")); got.code != http.StatusInternalServerError {
		t.Errorf("got %d %s, want the queued 500", got.code, got.body)
	}
	body := serve(s.Handler(), newGet("/fake/stats")).body
	var rep statsReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.InsideWait != 1 || rep.InsideWaitBot != 0 || rep.Injected != 1 ||
		!strings.Contains(body, `"inside_wait":1,"inside_wait_bot":0`) {
		t.Errorf("stats report %s", body)
	}
}
