package telegram

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// testToken looks like a real token so that both its plain and its
// query-escaped (':' as %3A) spellings are exercised.
const testToken = "123456789:AAHsecretTokenValue_-xyz"

// okSendBody is a successful sendMessage answer.
const okSendBody = `{"ok":true,"result":{"message_id":7,"date":1700000000,"chat":{"id":-100123,"type":"supergroup"},"text":"hi"}}`

// syncBuffer is a bytes.Buffer safe for concurrent writes by slog.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTestClient builds a client for apiURL that logs at debug level into
// the returned buffer and closes its idle connections when the test ends.
func newTestClient(t *testing.T, apiURL string, timeout time.Duration) (*Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	c, err := New(Config{
		Token:   testToken,
		APIURL:  apiURL,
		Timeout: timeout,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, logs
}

// startServer runs h on a loopback httptest server closed at test end.
// Each configure function may adjust the http.Server before it starts.
func startServer(t testing.TB, h http.HandlerFunc, configure ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	for _, f := range configure {
		f(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// replyServer answers every request with status and body.
func replyServer(status int, contentType, body string) func(*testing.T) string {
	return func(t *testing.T) string {
		return startServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}).URL
	}
}

// jsonServer answers every request with Telegram-shaped JSON.
func jsonServer(status int, body string) func(*testing.T) string {
	return replyServer(status, "application/json", body)
}

// closedPort returns the URL of a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// hangingServer reads the request and never answers; the handler returns
// once the client gives up or the test ends.
func hangingServer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := startServer(t, func(_ http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client leaving.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv.URL
}

// resetServer reads the request, then drops the connection without
// answering.
func resetServer(t *testing.T) string {
	t.Helper()
	return startServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	}).URL
}

// truncatedServer promises a long body, sends the start of it and aborts.
func truncatedServer(t *testing.T) string {
	t.Helper()
	return startServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}).URL
}

// untrustedTLSServer serves HTTPS with a certificate the client does not
// trust, so the TLS handshake fails.
func untrustedTLSServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("request reached a server whose certificate should have been rejected")
		_, _ = io.WriteString(w, okSendBody)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}
