package telegram

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// wholeRequestServer answers every sendMessage as message 7 and counts
// the requests whose body came whole; a cut-off one is no call a server
// could act on.
func wholeRequestServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	requests := new(atomic.Int64)
	srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		requests.Add(1)
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":42}}}`)
	})
	return srv, requests
}

// TestSendByCountsTheWaitForAConnection: a request that was in time when
// the call began but had to wait for a new connection longer than its
// send-by time allows gives up with ErrLate once the connection is there,
// and the server gets no whole request (the headers may come, the
// declared body does not); nothing is retried behind the caller.
func TestSendByCountsTheWaitForAConnection(t *testing.T) {
	t.Parallel()
	srv, requests := wholeRequestServer(t)
	const dial = 60 * time.Millisecond
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dial) // a slow handshake
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := New(Config{Token: testToken, APIURL: srv.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{Chat: "42", Text: "disk full"}
	_, err = c.Send(WithSendBy(context.Background(), time.Now().Add(dial/3)), slot(t), m)
	if !errors.Is(err, ErrLate) {
		t.Fatalf("send that waited %s for its connection: %v, want ErrLate", dial, err)
	}
	time.Sleep(50 * time.Millisecond) // anything written would have reached the handler by now
	if n := requests.Load(); n != 0 {
		t.Fatalf("late send: %d whole requests reached the server, want 0", n)
	}
	// The same call with time to spare goes out.
	sent, err := c.Send(WithSendBy(context.Background(), time.Now().Add(time.Minute)), slot(t), m)
	if err != nil || sent.MessageID != 7 || requests.Load() != 1 {
		t.Fatalf("send in time: %+v, %v, %d requests; want message 7 and 1 request", sent, err, requests.Load())
	}
}

// stallTransport holds each request for stall before the transport takes
// it, as a busy process does between the send-by check and the write.
type stallTransport struct {
	base  http.RoundTripper
	stall atomic.Int64 // nanoseconds
}

func (s *stallTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(time.Duration(s.stall.Load()))
	return s.base.RoundTrip(r)
}

// TestCutOffHoldsOnAWarmConnection: a request on a reused connection that
// the process held past its send-by time still goes (cutting it would
// close the connection), but one held past the grant's cut-off does not:
// nothing reaches the server, and the call says ErrLate.
func TestCutOffHoldsOnAWarmConnection(t *testing.T) {
	t.Parallel()
	srv, requests := wholeRequestServer(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	st := &stallTransport{base: tr}
	c, err := New(Config{Token: testToken, APIURL: srv.URL, HTTPClient: &http.Client{Transport: st}})
	if err != nil {
		t.Fatal(err)
	}
	m := Message{Chat: "42", Text: "disk full"}
	if _, err := c.Send(context.Background(), slot(t), m); err != nil || requests.Load() != 1 {
		t.Fatalf("warming the connection: %v, %d requests", err, requests.Load())
	}
	const stall = 60 * time.Millisecond
	st.stall.Store(int64(stall))
	// Past its send-by time, before its cut-off: sent on the warm connection.
	now := time.Now()
	ctx := WithSendBy(context.Background(), now.Add(stall/3))
	if _, err := c.Send(ctx, slot(t).CutAt(now.Add(time.Minute)), m); err != nil || requests.Load() != 2 {
		t.Fatalf("held past its send-by time only: %v, %d requests; want it sent (2)", err, requests.Load())
	}
	// Past its cut-off: not sent.
	now = time.Now()
	ctx = WithSendBy(context.Background(), now.Add(stall/3))
	_, err = c.Send(ctx, slot(t).CutAt(now.Add(stall*2/3)), m)
	if !errors.Is(err, ErrLate) {
		t.Fatalf("held past its cut-off: %v, want ErrLate", err)
	}
	time.Sleep(50 * time.Millisecond) // anything written would have reached the handler by now
	if n := requests.Load(); n != 2 {
		t.Fatalf("held past its cut-off: %d whole requests reached the server, want 2", n)
	}
}
