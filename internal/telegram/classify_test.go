package telegram

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestSendClassifiesEveryOutcome(t *testing.T) {
	t.Parallel()

	const html502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body>\r\n</html>\r\n"

	type want struct {
		reason     Reason
		code       int
		temporary  bool
		retryAfter time.Duration
		migrateTo  int64
		ambiguous  bool
		desc       string // substring of Description
	}
	cases := []struct {
		name    string
		server  func(*testing.T) string
		timeout time.Duration // 0: a generous default
		want    want
	}{
		{
			name:   "429 with retry_after",
			server: jsonServer(429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}`),
			want:   want{reason: ReasonRateLimited, code: 429, temporary: true, retryAfter: 3 * time.Second, desc: "Too Many Requests: retry after 3"},
		},
		{
			name:   "429 with the delay only in the description",
			server: jsonServer(429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 11"}`),
			want:   want{reason: ReasonRateLimited, code: 429, temporary: true, retryAfter: 11 * time.Second, desc: "retry after 11"},
		},
		{
			name:   "500 JSON",
			server: jsonServer(500, `{"ok":false,"error_code":500,"description":"Internal Server Error"}`),
			want:   want{reason: ReasonServerError, code: 500, temporary: true, desc: "Internal Server Error"},
		},
		{
			name:   "502 HTML from a proxy",
			server: replyServer(502, "text/html", html502),
			want:   want{reason: ReasonServerError, code: 502, temporary: true, desc: "HTTP 502 Bad Gateway"},
		},
		{
			name:   "200 with an empty body",
			server: replyServer(200, "application/json", ""),
			want:   want{reason: ReasonServerError, code: 200, temporary: true, desc: "not Telegram JSON"},
		},
		{
			name:   "connection refused",
			server: closedPort,
			want:   want{reason: reasonTransport, temporary: true, desc: "connection refused"},
		},
		{
			name:   "TLS handshake failure",
			server: untrustedTLSServer,
			want:   want{reason: reasonTransport, temporary: true, desc: "certificate"},
		},
		{
			name:    "no answer before the timeout",
			server:  hangingServer,
			timeout: 100 * time.Millisecond,
			want:    want{reason: ReasonTimeout, temporary: true, ambiguous: true, desc: "deadline exceeded"},
		},
		{
			name:   "connection dropped after the request was written",
			server: resetServer,
			want:   want{reason: ReasonTimeout, temporary: true, ambiguous: true},
		},
		{
			name:   "response body cut off",
			server: truncatedServer,
			want:   want{reason: ReasonTimeout, code: 200, temporary: true, ambiguous: true, desc: "reading the HTTP 200 response failed"},
		},
		{
			name:   "400 can't parse entities",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"}`),
			want:   want{reason: ReasonParseEntities, code: 400, desc: `Unsupported start tag "x"`},
		},
		{
			name:   "400 group upgraded to supergroup",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1001234567890}}`),
			want:   want{reason: ReasonMigrated, code: 400, migrateTo: -1001234567890, desc: "upgraded to a supergroup"},
		},
		{
			name:   "403 blocked by the user",
			server: jsonServer(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`),
			want:   want{reason: ReasonBlocked, code: 403, desc: "Forbidden: bot was blocked by the user"},
		},
		{
			name:   "403 user deactivated",
			server: jsonServer(403, `{"ok":false,"error_code":403,"description":"Forbidden: user is deactivated"}`),
			want:   want{reason: ReasonBlocked, code: 403, desc: "user is deactivated"},
		},
		{
			name:   "403 kicked from supergroup",
			server: jsonServer(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the supergroup chat"}`),
			want:   want{reason: reasonKicked, code: 403, desc: "kicked"},
		},
		{
			name:   "403 not a member",
			server: jsonServer(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot is not a member of the channel chat"}`),
			want:   want{reason: reasonKicked, code: 403, desc: "not a member"},
		},
		{
			name:   "403 other",
			server: jsonServer(403, `{"ok":false,"error_code":403,"description":"Forbidden: bot can't initiate conversation with a user"}`),
			want:   want{reason: reasonForbidden, code: 403, desc: "can't initiate conversation"},
		},
		{
			name:   "400 chat not found",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`),
			want:   want{reason: ReasonChatNotFound, code: 400, desc: "chat not found"},
		},
		{
			name:   "400 message too long",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: message is too long"}`),
			want:   want{reason: ReasonTooLong, code: 400, desc: "message is too long"},
		},
		{
			name:   "400 caption too long",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: message caption is too long"}`),
			want:   want{reason: ReasonTooLong, code: 400, desc: "caption is too long"},
		},
		{
			name:   "400 edit changes nothing",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"}`),
			want:   want{reason: reasonNotModified, code: 400, desc: "message is not modified"},
		},
		{
			name:   "400 message to edit gone",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: message to edit not found"}`),
			want:   want{reason: ReasonMessageGone, code: 400, desc: "message to edit not found"},
		},
		{
			name:   "400 photo URL not fetched",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: wrong file identifier/HTTP URL specified"}`),
			want:   want{reason: reasonPhotoRejected, code: 400, desc: "wrong file identifier"},
		},
		{
			name:   "413 photo too large",
			server: jsonServer(413, `{"ok":false,"error_code":413,"description":"Request Entity Too Large"}`),
			want:   want{reason: reasonPhotoRejected, code: 413, desc: "Too Large"},
		},
		{
			name:   "400 other",
			server: jsonServer(400, `{"ok":false,"error_code":400,"description":"Bad Request: message thread not found"}`),
			want:   want{reason: ReasonBadRequest, code: 400, desc: "message thread not found"},
		},
		{
			name:   "401 bad token",
			server: jsonServer(401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`),
			want:   want{reason: ReasonUnauthorized, code: 401, temporary: true, desc: "Unauthorized"},
		},
		{
			name:   "404 wrong API URL",
			server: jsonServer(404, `{"ok":false,"error_code":404,"description":"Not Found"}`),
			want:   want{reason: reasonNotFound, code: 404, temporary: true, desc: "Not Found"},
		},
		{
			name:   "error_code missing: HTTP status used",
			server: jsonServer(409, `{"ok":false,"description":"Conflict: something odd"}`),
			want:   want{reason: ReasonBadRequest, code: 409, desc: "Conflict"},
		},
	}

	covered := map[Reason]bool{}
	for _, tc := range cases {
		covered[tc.want.reason] = true
	}
	for _, r := range Reasons() {
		// Only a paid send meets paid_refused: TestPaidRefusalClassified
		// covers it.
		if !covered[r] && r != ReasonPaidRefused {
			t.Errorf("no case covers reason %q", r)
		}
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			c, logs := newTestClient(t, tc.server(t), timeout)

			sent, err := c.Send(context.Background(), slot(t), Message{Chat: "42", Text: "hi"})
			if err == nil {
				t.Fatalf("Send succeeded with %+v, want an error", sent)
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error is %T (%v), want *Error", err, err)
			}
			got := want{
				reason:     e.Reason,
				code:       e.Code,
				temporary:  e.Temporary(),
				retryAfter: e.RetryAfter,
				migrateTo:  e.MigrateTo,
				ambiguous:  e.Ambiguous,
				desc:       tc.want.desc,
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v\nerror: %v", got, tc.want, e)
			}
			if !strings.Contains(e.Description, tc.want.desc) {
				t.Errorf("Description %q does not contain %q", e.Description, tc.want.desc)
			}
			if e.Temporary() != e.Reason.Temporary() {
				t.Errorf("Error.Temporary()=%t but Reason.Temporary()=%t", e.Temporary(), e.Reason.Temporary())
			}
			if !strings.Contains(logs.String(), "reason="+string(tc.want.reason)) {
				t.Errorf("debug log does not name the reason:\n%s", logs)
			}
		})
	}
}

func TestSendReturnsSent(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, jsonServer(200, okSendBody)(t), 0)
	got, err := c.Send(context.Background(), slot(t), Message{Chat: "-100123", Text: "hi"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if want := (Sent{MessageID: 7, ChatID: -100123}); got != want {
		t.Errorf("Send = %+v, want %+v", got, want)
	}
}

func TestSendUndecodableResultIsNotAnError(t *testing.T) {
	t.Parallel()
	// Telegram said ok: reporting an error would make the worker send the
	// message again.
	c, logs := newTestClient(t, jsonServer(200, `{"ok":true,"result":"unexpected"}`)(t), 0)
	got, err := c.Send(context.Background(), slot(t), Message{Chat: "1", Text: "hi"})
	if err != nil || got != (Sent{}) {
		t.Fatalf("Send = %+v, %v; want zero Sent and nil error", got, err)
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("no warning logged:\n%s", logs)
	}
}

func TestTransportErrorUnwraps(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, closedPort(t), 0)
	_, err := c.Send(context.Background(), slot(t), Message{Chat: "1", Text: "hi"})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(%v, ECONNREFUSED) = false", err)
	}
}

func TestSendContextDoneBeforeSending(t *testing.T) {
	t.Parallel()
	calls := make(chan struct{}, 1)
	srv := startServer(t, func(w http.ResponseWriter, _ *http.Request) {
		calls <- struct{}{}
		_, _ = w.Write([]byte(okSendBody))
	})
	c, _ := newTestClient(t, srv.URL, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := c.Send(ctx, slot(t), Message{Chat: "1", Text: "hi"})
	if err != context.Canceled {
		t.Errorf("Send error = %#v, want context.Canceled itself", err)
	}
	select {
	case <-calls:
		t.Error("the server was called")
	default:
	}
}

func TestSendCallerCancelsAfterWrite(t *testing.T) {
	t.Parallel()
	received := make(chan struct{})
	release := make(chan struct{})
	srv := startServer(t, func(_ http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client leaving.
		_, _ = io.Copy(io.Discard, r.Body)
		close(received)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	c, _ := newTestClient(t, srv.URL, 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-received
		cancel()
	}()

	_, err := c.Send(ctx, slot(t), Message{Chat: "1", Text: "shutdown"})
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v is not *Error", err)
	}
	if e.Reason != ReasonTimeout || !e.Ambiguous || !e.Temporary() {
		t.Errorf("got %+v, want ambiguous temporary timeout", e)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
	}
}

func TestSendReusesConnection(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := startServer(t, func(w http.ResponseWriter, _ *http.Request) {
		// Trailing whitespace the JSON decoder never reads: only draining
		// it lets the connection go back to the pool.
		_, _ = io.WriteString(w, okSendBody+strings.Repeat(" ", 3000))
	}, func(s *http.Server) {
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
	})
	c, _ := newTestClient(t, srv.URL, 0)
	for range 3 {
		if _, err := c.Send(context.Background(), slot(t), Message{Chat: "1", Text: "hi"}); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server saw %d connections for 3 sequential sends, want 1", n)
	}
}
