package reliability

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// The critical-behind-a-backlog case of issue 17 runs at Telegram's own
// clock (time scale 1): a private chat may take one message a second, so a
// critical message posted behind 100 queued default ones should arrive
// within one such interval plus Herald's own overhead.
const (
	crScale    = 1
	crBacklog  = 100
	crInterval = time.Second // fleet.PrivateWindows at scale 1
)

// crResult is one critical message posted behind a chat's backlog.
type crResult struct {
	Latency time.Duration // POST to the fake's acceptance
	// Between counts the chat's default messages the fake accepted after
	// the critical one was posted and before it was accepted.
	Between int
}

// crStack starts the fleet the critical-message cases use: the producer,
// two workers and the fake at Telegram's clock.
func crStack(tb testing.TB) *stack {
	return newStack(tb, stackOptions{Workers: 2, Fake: telegramfake.Config{TimeScale: crScale}, Timeout: 5 * time.Minute})
}

// crChatMessages returns the messages the fake accepted for chat, in order.
func crChatMessages(fake *telegramfake.Server, chat string) []telegramfake.Message {
	id, _ := strconv.ParseInt(chat, 10, 64)
	var out []telegramfake.Message
	for _, m := range fake.Messages() {
		if m.ChatID == id {
			out = append(out, m)
		}
	}
	return out
}

// crWaitText waits until the fake has accepted a message with text.
func crWaitText(ctx context.Context, fake *telegramfake.Server, text string) error {
	for {
		ms := fake.Messages()
		for _, m := range ms {
			if m.Text == text {
				return nil
			}
		}
		if err := fake.Wait(ctx, len(ms)+1); err != nil {
			return fmt.Errorf("waiting for %q: %w", text, err)
		}
	}
}

// crCriticalBehindBacklog posts crBacklog default messages to chat, waits
// until the first of them reached the fake (the rest now wait their turns),
// then posts one critical message to the same chat and waits for it.
func crCriticalBehindBacklog(ctx context.Context, s *stack, chat, label string) (crResult, error) {
	backlog := make([]fleet.Message, crBacklog)
	for i := range backlog {
		backlog[i] = fleet.Message{Chat: chat, Text: fmt.Sprintf("%s backlog %s #%d", label, chat, i)}
	}
	if _, err := s.fleet.PostAll(ctx, backlog, 8); err != nil {
		return crResult{}, err
	}
	for len(crChatMessages(s.fake, chat)) == 0 {
		if err := s.fake.Wait(ctx, len(s.fake.Messages())+1); err != nil {
			return crResult{}, err
		}
	}
	text := fmt.Sprintf("%s CRITICAL %s", label, chat)
	before := len(crChatMessages(s.fake, chat))
	posted := time.Now()
	if _, _, err := s.fleet.Post(ctx, map[string]any{"chat": chat, "text": text, "queue": "critical"}); err != nil {
		return crResult{}, err
	}
	if err := crWaitText(ctx, s.fake, text); err != nil {
		return crResult{}, err
	}
	var r crResult
	for _, m := range crChatMessages(s.fake, chat)[before:] {
		if m.Text == text {
			r.Latency = m.At.Sub(posted)
			break
		}
		r.Between++
	}
	return r, nil
}

// TestCriticalTakesItsChatsNextTurn: a critical message posted to a chat
// with 100 default messages queued is sent in the chat's next turn — before
// the second default message that follows its post — and the chat's
// one-a-second limit still holds at the fake for every message around it.
func TestCriticalTakesItsChatsNextTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs at Telegram's clock; skipped in -short mode")
	}
	t.Parallel()
	s := crStack(t)
	const chat = "6100"
	r, err := crCriticalBehindBacklog(s.ctx, s, chat, "turn")
	if err != nil {
		t.Fatal(err)
	}
	if r.Between > 1 {
		t.Errorf("%d default messages of the chat went out between the critical post and its delivery, want at most the one already due", r.Between)
	}
	// The moved-back default messages keep the chat's window: wait for two
	// more of them and check the spacing of everything the chat received.
	n := len(crChatMessages(s.fake, chat))
	for len(crChatMessages(s.fake, chat)) < n+2 {
		if err := s.fake.Wait(s.ctx, len(s.fake.Messages())+1); err != nil {
			t.Fatal(err)
		}
	}
	ms := crChatMessages(s.fake, chat)
	least := time.Duration(float64(crInterval) * (1 - telegramfake.DefaultTolerance))
	for i := 1; i < len(ms); i++ {
		if gap := ms[i].At.Sub(ms[i-1].At); gap < least {
			t.Errorf("messages %d and %d of the chat came %v apart, want at least %v", i-1, i, gap, least)
		}
	}
	if st := s.fake.Stats(); st.TooMany != 0 {
		t.Errorf("the fake answered %d 429s; the chat's limit did not hold", st.TooMany)
	}
	t.Logf("critical behind %d queued: latency=%v between=%d (chat interval %v)", crBacklog, r.Latency.Round(time.Millisecond), r.Between, crInterval)
}

// BenchmarkCriticalBehindBacklog measures, at Telegram's clock, how long a
// critical message posted through the API takes to reach the fake when its
// chat has 100 default messages queued; each iteration uses a fresh chat
// and posts right after the chat's first message went out, so the critical
// one waits for nearly a whole interval. Run it with a fixed count:
//
//	go test ./test/reliability -run '^$' -bench CriticalBehindBacklog -benchtime 10x
//
// over-interval-ms is the latency beyond the chat's one-second interval.
func BenchmarkCriticalBehindBacklog(b *testing.B) {
	s := crStack(b)
	var lat []time.Duration
	between := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := crCriticalBehindBacklog(s.ctx, s, strconv.Itoa(6200+i), "bench")
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, r.Latency)
		between = max(between, r.Between)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(lat[len(lat)-1]-crInterval), "over-interval-ms")
	b.ReportMetric(float64(between), "max-defaults-between")
	if st := s.fake.Stats(); st.TooMany != 0 {
		b.Errorf("the fake answered %d 429s", st.TooMany)
	}
}
