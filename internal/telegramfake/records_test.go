package telegramfake

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Bot: unlimited})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	waited := make(chan error, 1)
	go func() { waited <- s.Wait(ctx, 3) }()
	for i := range 3 {
		mustAccept(t, send(s, text(strconv.Itoa(i+1), "x")))
	}
	if err := <-waited; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if err := s.Wait(ctx, 2); err != nil {
		t.Fatalf("Wait for fewer than present: %v", err)
	}
}

func TestWaitEnds(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	mustAccept(t, send(s, text("1", "x")))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Wait(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context: %v", err)
	}

	s.Reset()
	if n := len(s.Messages()); n != 0 {
		t.Errorf("Reset left %d messages", n)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.Wait(context.Background(), 1) }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; !errors.Is(err, errClosed) {
		t.Errorf("Wait across Close: %v", err)
	}
}

func TestResetClearsState(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Private: per(1, time.Hour)})
	mustAccept(t, send(s, text("42", "x")))
	mustRetryAfter(t, send(s, text("42", "x")))
	s.SetChat("43", ChatBehavior{Blocked: true})
	s.FailNext(1, FaultServerError)
	s.SetOutage(true)
	s.Force429(time.Hour)
	s.Reset()
	if st := s.Stats(); st.Requests != 0 || st.TooMany != 0 || len(st.TooManyByChat) != 0 {
		t.Errorf("stats after Reset %+v", st)
	}
	mustAccept(t, send(s, text("42", "x")))
	mustAccept(t, send(s, text("43", "x")))
	if got := s.Messages()[0].MessageID; got != 1 {
		t.Errorf("message ids restart at 1 after Reset, got %d", got)
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{Bot: unlimited, Private: unlimited, Group: unlimited})
	const chats, perChat = 8, 50
	var wg sync.WaitGroup
	for c := range chats {
		wg.Go(func() {
			for range perChat {
				if got := send(s, text(strconv.Itoa(-(c+1)), "x")); got.code != 200 {
					t.Errorf("got %d %s", got.code, got.body)
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			_ = s.Stats()
			_ = s.Messages()
		}
	})
	wg.Wait()
	last := map[int64]int{}
	for _, m := range s.Messages() {
		if m.MessageID != last[m.ChatID]+1 {
			t.Fatalf("chat %d: message id %d after %d", m.ChatID, m.MessageID, last[m.ChatID])
		}
		last[m.ChatID] = m.MessageID
	}
	if st := s.Stats(); st.Accepted != chats*perChat || st.Requests != chats*perChat {
		t.Errorf("stats %+v", st)
	}
}
