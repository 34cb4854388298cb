package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalReader signals started at its first Read, then blocks until
// release is closed, then gives body.
type signalReader struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
	body    io.Reader
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.started) })
	<-s.release
	return s.body.Read(p)
}

func gateError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	return e
}

// TestBodyGateRefusesDeclaredOversize checks that a Content-Length over the
// limit is refused without reading a byte.
func TestBodyGateRefusesDeclaredOversize(t *testing.T) {
	t.Parallel()
	g := NewBodyGate(1, time.Minute)
	sr := &signalReader{started: make(chan struct{}), release: make(chan struct{}), body: strings.NewReader("x")}
	r := httptest.NewRequest(http.MethodPost, "/", sr)
	r.ContentLength = 1 << 20
	w := httptest.NewRecorder()
	_, err := g.ReadBody(w, r, 1024)
	if e := gateError(t, err); e.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", e.Status)
	}
	select {
	case <-sr.started:
		t.Fatal("the body was read although its declared length is over the limit")
	default:
	}
	if w.Header().Get("Connection") != "close" {
		t.Error("a refused body does not close the connection")
	}
}

// TestBodyGateBoundsConcurrentReads holds the gate's only slot with a body
// that does not arrive: a second request gets a 503 when its wait ends, and
// once the slot is free a third one is read.
func TestBodyGateBoundsConcurrentReads(t *testing.T) {
	t.Parallel()
	g := NewBodyGate(1, 200*time.Millisecond)
	sr := &signalReader{started: make(chan struct{}), release: make(chan struct{}), body: strings.NewReader("first")}
	first := make(chan error, 1)
	go func() {
		_, err := g.ReadBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", sr), 1024)
		first <- err
	}()
	<-sr.started // the first request holds the slot

	_, err := g.ReadBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader("second")), 1024)
	if e := gateError(t, err); e.Status != http.StatusServiceUnavailable {
		t.Fatalf("second read while the slot is held: status %d, want 503", e.Status)
	}
	close(sr.release)
	if err := <-first; err != nil {
		t.Fatalf("first read: %v", err)
	}
	b, err := g.ReadBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader("third")), 1024)
	if err != nil || string(b) != "third" {
		t.Fatalf("third read = %q, %v", b, err)
	}
}

// TestBodyGateTimesOutSlowBodies sends a body byte by byte to a real server
// far slower than the gate allows: the answer is a 408 and the server
// closes the connection.
func TestBodyGateTimesOutSlowBodies(t *testing.T) {
	t.Parallel()
	g := NewBodyGate(4, 300*time.Millisecond)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := g.ReadBody(w, r, 1<<20); err != nil {
			var e *Error
			errors.As(err, &e)
			WriteError(w, e)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config = NewServer(srv.Config.Handler, nil)
	srv.Start()
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nx")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Drip until the server answers: each write is paced by a ticker, not
	// asserted on.
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- nil
			return
		}
		answered <- resp
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var resp *http.Response
	for resp == nil {
		select {
		case resp = <-answered:
			if resp == nil {
				t.Fatal("connection closed without an answer")
			}
		case <-tick.C:
			_, _ = conn.Write([]byte("x"))
		case <-ctx.Done():
			t.Fatal("no answer to a body dripped slower than the gate's timeout")
		}
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	if !resp.Close {
		t.Error("the server keeps the connection of a timed-out body open")
	}
}
