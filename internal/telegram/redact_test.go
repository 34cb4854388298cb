package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// tokenSpellings are the forms of testToken that must never be printed.
var tokenSpellings = []string{
	testToken,
	url.QueryEscape(testToken), // ':' as %3A
	strings.ReplaceAll(url.QueryEscape(testToken), "%3A", "%3a"),
}

// assertNoToken fails if text contains any spelling of testToken.
func assertNoToken(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range tokenSpellings {
		if strings.Contains(text, s) {
			t.Errorf("%s leaks the token (%q):\n%s", what, s, text)
		}
	}
}

// causeTexts returns the texts of every error in err's tree.
func causeTexts(err error) []string {
	if err == nil {
		return nil
	}
	texts := []string{err.Error()}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		texts = append(texts, causeTexts(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			texts = append(texts, causeTexts(e)...)
		}
	}
	return texts
}

func TestErrorsNeverContainToken(t *testing.T) {
	t.Parallel()
	echoURL := func(t *testing.T) string {
		return startServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			desc := fmt.Sprintf("Bad Request: no such method %s (escaped %s)", r.URL.String(), url.QueryEscape(r.URL.Path))
			_, _ = fmt.Fprintf(w, `{"ok":false,"error_code":400,"description":%q}`, desc)
		}).URL
	}
	echoHTML := func(t *testing.T) string {
		return startServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = fmt.Fprintf(w, "<html><body>502 Bad Gateway for %s</body></html>", r.URL.Path)
		}).URL
	}
	cases := []struct {
		name     string
		server   func(*testing.T) string
		timeout  time.Duration
		reason   Reason
		redacted bool // Description must show that something was redacted
	}{
		{name: "closed port", server: closedPort, reason: reasonTransport, redacted: true},
		{name: "server hangs past the timeout", server: hangingServer, timeout: 100 * time.Millisecond, reason: ReasonTimeout, redacted: true},
		{name: "HTML 502", server: replyServer(502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>"), reason: ReasonServerError},
		{name: "HTML 502 quoting the URL", server: echoHTML, reason: ReasonServerError, redacted: true},
		{name: "description echoes the URL", server: echoURL, reason: ReasonBadRequest, redacted: true},
		{name: "TLS handshake failure", server: untrustedTLSServer, reason: reasonTransport, redacted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			c, logs := newTestClient(t, tc.server(t), timeout)
			_, err := c.Send(context.Background(), slot(t), Message{Chat: "1", Text: "hi"})
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("error %v is not *Error", err)
			}
			if e.Reason != tc.reason {
				t.Errorf("Reason %q, want %q (%v)", e.Reason, tc.reason, e)
			}
			if tc.redacted && !strings.Contains(e.Description, redacted) {
				t.Errorf("Description %q shows no redaction; the scenario did not put the token in the error", e.Description)
			}
			wrapped := fmt.Errorf("worker: %w", err)
			for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
				assertNoToken(t, "Sprintf("+f+")", fmt.Sprintf(f, err))
				assertNoToken(t, "Sprintf("+f+") of a wrapping error", fmt.Sprintf(f, wrapped))
			}
			assertNoToken(t, "err.Error()", err.Error())
			assertNoToken(t, "Description", e.Description)
			for i, text := range causeTexts(err) {
				assertNoToken(t, fmt.Sprintf("cause %d", i), text)
			}
			if logs.String() == "" {
				t.Error("nothing was logged; the slog check would be vacuous")
			}
			assertNoToken(t, "slog output", logs.String())
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, "http://127.0.0.1:1", 0)
	escaped := url.QueryEscape(testToken)
	lower := strings.ReplaceAll(escaped, "%3A", "%3a")
	cases := []struct{ in, want string }{
		{"", ""},
		{"nothing secret", "nothing secret"},
		{"/bot" + testToken + "/sendMessage", "/bot<redacted>/sendMessage"},
		{"a=" + escaped + "&b=" + lower, "a=<redacted>&b=<redacted>"},
		{testToken + testToken, "<redacted><redacted>"},
	}
	for _, tc := range cases {
		if got := c.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactTailDropsCutToken(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, "http://127.0.0.1:1", 0)
	for cut := 1; cut < len(testToken); cut++ {
		in := "url /bot" + testToken + " then /bot" + testToken[:cut]
		got := c.redactTail(in)
		if want := "url /bot<redacted> then /bot"; got != want {
			t.Fatalf("redactTail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCausesWithTokenAreRedacted(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, "http://127.0.0.1:1", 0)
	inner := errors.New("redirect to /bot" + testToken + "/x refused")
	causes := c.safeCauses(&url.Error{Op: "Post", URL: "http://h/bot" + testToken, Err: fmt.Errorf("wrapped: %w", inner)})
	if len(causes) != 1 {
		t.Fatalf("got %d causes, want 1", len(causes))
	}
	assertNoToken(t, "cause", causes[0].Error())
	if errors.Is(causes[0], inner) {
		t.Error("the token-bearing error is still reachable through Unwrap")
	}
}
