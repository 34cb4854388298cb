package telegram

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestSendByGivesUpBeforeWriting: a send whose send-by time has passed
// returns ErrLate and nothing reaches the server; one still in time goes
// out as usual.
func TestSendByGivesUpBeforeWriting(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":42}}}`)
	})
	c, _ := newTestClient(t, srv.URL, 0)
	ctx := context.Background()
	m := Message{Chat: "42", Text: "disk full"}

	_, err := c.Send(WithSendBy(ctx, time.Now().Add(-time.Millisecond)), slot(t), m)
	if !errors.Is(err, ErrLate) {
		t.Fatalf("late send: %v, want ErrLate", err)
	}
	if _, ok := AsError(err); ok {
		t.Fatalf("late send: %v is a Telegram error; nothing was sent", err)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("late send: %d requests reached the server, want 0", n)
	}
	sent, err := c.Send(WithSendBy(ctx, time.Now().Add(time.Minute)), slot(t), m)
	if err != nil || sent.MessageID != 7 || requests.Load() != 1 {
		t.Fatalf("send in time: %+v, %v, %d requests; want message 7 and 1 request", sent, err, requests.Load())
	}
}
