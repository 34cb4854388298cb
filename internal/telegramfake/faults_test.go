package telegramfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFailNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault     fault
		code      int
		ctype     string
		countedAs func(Stats) int64
	}{
		{FaultServerError, http.StatusInternalServerError, "application/json", func(s Stats) int64 { return s.ServerErrors }},
		{FaultBadGateway, http.StatusBadGateway, "text/html", func(s Stats) int64 { return s.ServerErrors }},
		{FaultTooMany, http.StatusTooManyRequests, "application/json", func(s Stats) int64 { return s.TooMany }},
	}
	for _, tc := range tests {
		t.Run(tc.fault.String(), func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			s.FailNext(2, tc.fault)
			for range 2 {
				got := send(s, text("42", "x"))
				if got.code != tc.code || got.contentType != tc.ctype {
					t.Fatalf("got %d %q %s, want %d %q", got.code, got.contentType, got.body, tc.code, tc.ctype)
				}
			}
			mustAccept(t, send(s, text("42", "x")))
			st := s.Stats()
			if tc.countedAs(st) != 2 || st.Injected != 2 || st.Accepted != 1 || len(s.Messages()) != 1 {
				t.Errorf("stats %+v, messages %d", st, len(s.Messages()))
			}
		})
	}
}

func TestFailNextQueuesInOrder(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.FailNext(1, FaultServerError)
	s.FailNext(1, FaultTooMany)
	s.FailNext(0, FaultServerError) // ignored
	s.FailNext(3, fault(99))        // ignored
	for _, want := range []int{500, 429, 200} {
		if got := send(s, text("42", "x")); got.code != want {
			t.Fatalf("got %d, want %d", got.code, want)
		}
	}
	// getMe is never faulted.
	s.FailNext(1, FaultServerError)
	mustAccept(t, call(s, testToken, "getMe", nil))
}

// hangSignal makes s report on the returned channel each time a request
// starts hanging.
func hangSignal(s *Server) <-chan struct{} {
	ch := make(chan struct{}, 16)
	s.onHang = func() { ch <- struct{}{} }
	return ch
}

func TestHangHoldsUntilClientGivesUp(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	hung := hangSignal(s)
	s.FailNext(1, FaultHang)

	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/bot"+testToken+"/sendMessage?chat_id=42&text=x", nil)
	done := make(chan reply, 1)
	go func() { done <- serve(s, r) }()
	<-hung
	select {
	case got := <-done:
		t.Fatalf("hung request answered %d %s", got.code, got.body)
	default:
	}
	cancel()
	<-done
	if st := s.Stats(); st.Hangs != 1 || st.Accepted != 0 || len(s.Messages()) != 0 {
		t.Errorf("a hung request must not deliver: %+v", st)
	}
}

func TestAcceptThenHangDelivers(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.FailNext(1, FaultAcceptThenHang)
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/bot"+testToken+"/sendMessage?chat_id=42&text=ambiguous", nil)
	done := make(chan reply, 1)
	go func() { done <- serve(s, r) }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := s.Wait(wctx, 1); err != nil {
		t.Fatal(err)
	}
	if msgs := s.Messages(); msgs[0].Text != "ambiguous" {
		t.Errorf("recorded %+v", msgs)
	}
	cancel()
	<-done
	if st := s.Stats(); st.Hangs != 1 || st.Accepted != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestAcceptThenHangOnInvalidRequest(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.FailNext(1, FaultAcceptThenHang)
	if got := send(s, text("42", "")); got.code != http.StatusBadRequest {
		t.Errorf("got %d %s, want the validation error", got.code, got.body)
	}
}

func TestCloseReleasesHangs(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{})
	hung := hangSignal(s)
	s.FailNext(1, FaultHang)
	errc := make(chan error, 1)
	go func() {
		_, _, err := postHTTP(context.Background(), s, "sendMessage", text("42", "x"))
		errc <- err
	}()
	<-hung
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("the hung client got an answer; want its connection dropped")
	}
}

func TestOutage(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.SetOutage(true)
	for _, r := range []reply{
		send(s, text("42", "x")),
		call(s, testToken, "getMe", nil),
		call(s, "wrong:token", "getMe", nil),
	} {
		if r.code != http.StatusBadGateway || !strings.Contains(r.body, "502 Bad Gateway") {
			t.Errorf("during outage got %d %s", r.code, r.body)
		}
	}
	s.SetOutage(false)
	mustAccept(t, send(s, text("42", "x")))
	if st := s.Stats(); st.ServerErrors != 3 || st.Requests != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestForce429(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{TimeScale: 10})
	s.Force429(30 * time.Second)
	if retry := mustRetryAfter(t, send(s, text("41", "announces"))); retry != 30 {
		t.Errorf("retry_after %d, want 30 (Telegram seconds)", retry)
	}
	// Reading the bot's identity or updates is not a send: it goes on.
	if r := call(s, testToken, "getMe", nil); r.code != http.StatusOK {
		t.Errorf("getMe during a flood wait: %d %s", r.code, r.body)
	}
	clock.Advance(2 * time.Second) // 20 Telegram seconds at scale 10
	if retry := mustRetryAfter(t, send(s, text("42", "x"))); retry != 10 {
		t.Errorf("retry_after %d, want the remaining 10", retry)
	}
	clock.Advance(time.Duration(10) * s.RetryAfterUnit())
	mustAccept(t, send(s, text("42", "x")))

	s.Force429(time.Minute)
	s.Force429(0) // ends it early
	mustAccept(t, send(s, text("43", "y")))
	if st := s.Stats(); st.TooManyFlood != 2 || len(st.TooManyByChat) != 0 || st.InsideWait != 1 || st.InsideWaitBot != 1 {
		t.Errorf("stats %+v", st)
	}

	// A new flood wait is announced afresh: its first answer is not inside.
	s.Force429(time.Minute)
	mustRetryAfter(t, send(s, text("45", "w")))
	if r := call(s, testToken, "getChat", url.Values{"chat_id": {"42"}}); r.code != http.StatusOK {
		t.Errorf("getChat during a flood wait: %d %s", r.code, r.body)
	}
	mustRetryAfter(t, send(s, text("44", "z")))
	mustRetryAfter(t, send(s, text("46", "v")))
	if st := s.Stats(); st.TooManyFlood != 5 || st.InsideWait != 3 || st.InsideWaitBot != 3 || st.TooMany != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestFaultRates(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Bot: unlimited, Private: unlimited})
	s.SetFaultRates(FaultRates{ServerError: 1, Seed: 7})
	seen := map[int]int{}
	for range 40 {
		seen[send(s, text("42", "x")).code]++
	}
	if seen[500] == 0 || seen[502] == 0 || seen[500]+seen[502] != 40 {
		t.Errorf("answers %v; want only 500s and 502s, both present", seen)
	}
	s.SetFaultRates(FaultRates{})
	mustAccept(t, send(s, text("42", "x")))
}

func TestFaultRatesRepeatWithSeed(t *testing.T) {
	t.Parallel()
	run := func() []int {
		s, _ := newFake(t, Config{Bot: unlimited, Private: unlimited})
		s.SetFaultRates(FaultRates{ServerError: 0.5, Seed: 42})
		var codes []int
		for range 50 {
			codes = append(codes, send(s, text("42", "x")).code)
		}
		return codes
	}
	a, b := run(), run()
	mixed := false
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: %d then %d with the same seed", i, a[i], b[i])
		}
		mixed = mixed || a[i] == http.StatusOK
	}
	if !mixed {
		t.Error("a 0.5 rate failed every request")
	}
}

func TestChatBehaviorByNameAndClear(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.SetChat("@news", ChatBehavior{Kicked: true})
	got := send(s, text(idOf("@news"), "x"))
	if d := decode(t, got); got.code != 403 || d.Description != "Forbidden: bot was kicked from the channel chat" {
		t.Errorf("got %d %s", got.code, got.body)
	}
	s.SetChat("@NEWS", ChatBehavior{})
	mustAccept(t, send(s, text("@news", "x")))
	s.SetChat("bogus", ChatBehavior{Blocked: true}) // ignored
	if st := s.Stats(); st.Rejected != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestMigratedChatTarget(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.SetChat("-55", ChatBehavior{MigrateTo: -10055})
	got := send(s, text("-55", "x"))
	d := decode(t, got)
	if got.code != 400 || d.Parameters.MigrateToChatID != -10055 {
		t.Fatalf("got %d %s", got.code, got.body)
	}
	mustAccept(t, send(s, text(strconv.FormatInt(d.Parameters.MigrateToChatID, 10), "x")))
}

func TestParseFault(t *testing.T) {
	t.Parallel()
	for f := FaultServerError; f <= FaultAcceptThenHang; f++ {
		got, err := faultNamed(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFault(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := faultNamed("meteor"); err == nil {
		t.Error("ParseFault accepted an unknown name")
	}
	if s := fault(0).String(); s != "Fault(0)" {
		t.Errorf("zero Fault prints %q", s)
	}
}
