package telegramfake

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// unlimited switches a rule off.
var unlimited = Limit{Rate: -1}

func TestPrivateChatSecondMessageWaits(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Private: Limit{Rate: 1, Per: time.Second, Burst: 1}})
	mustAccept(t, send(s, text("42", "first")))
	retry := mustRetryAfter(t, send(s, text("42", "second")))
	if retry != 1 {
		t.Errorf("retry_after %d, want 1", retry)
	}
	if st := s.Stats(); st.TooMany != 1 || st.TooManyByChat["42"] != 1 || st.TooManyBot != 0 || st.Accepted != 1 {
		t.Errorf("stats after one chat 429: %+v", st)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("the refused message was recorded: %d messages", n)
	}
	// Another chat is not held back by this one's limit.
	mustAccept(t, send(s, text("43", "other chat")))

	clock.Advance(time.Duration(retry) * s.RetryAfterUnit())
	mustAccept(t, send(s, text("42", "second again")))
}

func TestDefaultPrivateBurst(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	mustAccept(t, send(s, text("42", "1")))
	mustAccept(t, send(s, text("42", "2")))
	retry := mustRetryAfter(t, send(s, text("42", "3")))
	clock.Advance(time.Duration(retry) * s.RetryAfterUnit())
	mustAccept(t, send(s, text("42", "3")))
	// Sustained rate: one a second.
	for i := range 3 {
		mustRetryAfter(t, send(s, text("42", "early")))
		clock.Advance(time.Second)
		mustAccept(t, send(s, text("42", "on time "+strconv.Itoa(i))))
	}
}

func TestGroupLimitAtTimeScale(t *testing.T) {
	t.Parallel()
	// 20 a minute with a burst of 20, run 60 times faster: a minute lasts a
	// real second and the spacing between messages is 50ms.
	s, clock := newFake(t, Config{Group: Limit{Rate: 20, Per: time.Minute, Burst: 20}, TimeScale: 60})
	if got, want := s.RetryAfterUnit(), time.Second/60+1; got != want {
		t.Errorf("RetryAfterUnit %v, want %v", got, want)
	}
	for i := range 20 {
		mustAccept(t, send(s, text("-100900", "msg "+strconv.Itoa(i))))
	}
	retry := mustRetryAfter(t, send(s, text("-100900", "one too many")))
	if retry != 3 {
		t.Errorf("retry_after %d, want 3 (one 60 s/20 interval in Telegram seconds)", retry)
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
	// within a few windows' worth of sends, and waiting retry_after units
	// is always enough.
	s := startFake(t, Config{Group: Limit{Rate: 20, Per: time.Minute, Burst: 20}, TimeScale: 60})
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
		t.Fatalf("accepted %d before a 429 (retry_after %d); want a 429 after at least the burst of 20", accepted, retry)
	}
	<-time.After(time.Duration(retry) * s.RetryAfterUnit())
	resp, body, err := postHTTP(ctx, s, "sendMessage", text("-100901", "after wait"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after waiting retry_after: %v %s", err, body)
	}
}

func TestBotLimitAcrossChats(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Bot: Limit{Rate: 5, Per: time.Second, Burst: 5}})
	for i := range 5 {
		mustAccept(t, send(s, text(strconv.Itoa(100+i), "x")))
	}
	retry := mustRetryAfter(t, send(s, text("200", "sixth chat")))
	st := s.Stats()
	if st.TooManyBot != 1 || len(st.TooManyByChat) != 0 {
		t.Errorf("a bot-wide 429 must not count against a chat: %+v", st)
	}
	clock.Advance(time.Duration(retry) * s.RetryAfterUnit())
	mustAccept(t, send(s, text("200", "sixth chat")))
}

func TestLimitOrder(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{
		Bot:     Limit{Rate: 2, Per: time.Second, Burst: 2},
		Private: Limit{Rate: 1, Per: time.Minute, Burst: 1},
	})
	mustAccept(t, send(s, text("1", "a")))
	mustRetryAfter(t, send(s, text("1", "b"))) // chat limit; must not use bot capacity
	mustAccept(t, send(s, text("2", "c")))
	// Both rules now refuse chat 1; the bot-wide one is reported.
	mustRetryAfter(t, send(s, text("1", "d")))
	st := s.Stats()
	if st.TooManyBot != 1 || st.TooManyByChat["1"] != 1 {
		t.Errorf("want one chat 429 then one bot 429, got %+v", st)
	}
	// A flood wait comes before both.
	s.Force429(time.Hour)
	if retry := mustRetryAfter(t, send(s, text("3", "e"))); retry != 3600 {
		t.Errorf("flood retry_after %d, want 3600", retry)
	}
	if st := s.Stats(); st.TooManyFlood != 1 || st.TooManyBot != 1 || st.TooMany != 3 {
		t.Errorf("flood 429 counted wrongly: %+v", st)
	}
}

func TestChannelSharesLimitAcrossNames(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Group: Limit{Rate: 1, Per: time.Minute, Burst: 1}})
	mustAccept(t, send(s, text("@Herald_Alerts", "by name")))
	mustRetryAfter(t, send(s, text(idOf("@herald_alerts"), "by id")))
	key, err := s.ChatKey(idOf("@herald_alerts"))
	if err != nil {
		t.Fatal(err)
	}
	if key != "@herald_alerts" || s.Stats().TooManyByChat[key] != 1 {
		t.Errorf("key %q, counts %v", key, s.Stats().TooManyByChat)
	}
	if got := s.Messages()[0]; got.ChatUsername != "Herald_Alerts" || strconv.FormatInt(got.ChatID, 10) != idOf("@herald_alerts") {
		t.Errorf("recorded %+v", got)
	}
}

func TestPenaltyPunishesFlooding(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Private: Limit{Rate: 1, Per: time.Second, Burst: 1}, Penalty: 2 * time.Second})
	mustAccept(t, send(s, text("42", "a")))
	first := mustRetryAfter(t, send(s, text("42", "b")))
	second := mustRetryAfter(t, send(s, text("42", "c"))) // sent while locked out
	if first != 1 || second != 3 {
		t.Errorf("retry_after %d then %d, want 1 then 3", first, second)
	}
	clock.Advance(time.Duration(first) * s.RetryAfterUnit())
	mustRetryAfter(t, send(s, text("42", "d"))) // the first wait no longer suffices
	if st := s.Stats(); st.Penalties != 2 {
		t.Errorf("Penalties %d, want 2", st.Penalties)
	}
}

func TestNoPenaltyByDefault(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{Private: Limit{Rate: 1, Per: time.Second, Burst: 1}})
	mustAccept(t, send(s, text("42", "a")))
	for range 5 {
		if retry := mustRetryAfter(t, send(s, text("42", "flood"))); retry != 1 {
			t.Fatalf("retry_after grew to %d without a Penalty", retry)
		}
	}
	clock.Advance(s.RetryAfterUnit())
	mustAccept(t, send(s, text("42", "b")))
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

func TestLimiterForgetsIdleChats(t *testing.T) {
	t.Parallel()
	l := newLimiter(Config{}.withDefaults())
	now := epoch
	for i := range minSweep + 10 {
		if scope, _ := l.admit(now, int64(i+1)); scope != scopeNone {
			t.Fatalf("chat %d refused", i+1)
		}
		now = now.Add(time.Second) // keep the bot-wide rule quiet
	}
	if len(l.chats) > minSweep {
		t.Errorf("%d chat buckets kept; idle ones should have been dropped", len(l.chats))
	}
}

func TestLimitDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, def, want Limit
	}{
		{Limit{}, DefaultGroupLimit, DefaultGroupLimit},
		{Limit{Rate: 5}, DefaultGroupLimit, Limit{Rate: 5, Per: time.Second, Burst: 1}},
		{Limit{Per: time.Hour, Burst: 3}, DefaultGroupLimit, Limit{Rate: 20, Per: time.Hour, Burst: 3}},
		{unlimited, DefaultBotLimit, unlimited},
	}
	for _, tc := range tests {
		if got := tc.in.orDefault(tc.def); got != tc.want {
			t.Errorf("%+v.orDefault(%+v) = %+v, want %+v", tc.in, tc.def, got, tc.want)
		}
	}
}
