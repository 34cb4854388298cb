package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

func TestAsError(t *testing.T) {
	t.Parallel()
	inner := &Error{Reason: ReasonBlocked, Code: 403}
	cases := []struct {
		name string
		err  error
		want *Error
	}{
		{"nil", nil, nil},
		{"other error", errors.New("boom"), nil},
		{"direct", inner, inner},
		{"wrapped", fmt.Errorf("task 9: %w", inner), inner},
		{"typed nil", (*Error)(nil), nil},
	}
	for _, tc := range cases {
		got, ok := AsError(tc.err)
		if got != tc.want || ok != (tc.want != nil) {
			t.Errorf("%s: AsError = %v, %t; want %v", tc.name, got, ok, tc.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  *Error
		want string
	}{
		{&Error{Reason: ReasonBlocked, Code: 403, Description: "Forbidden: bot was blocked by the user"},
			"telegram: 403 blocked: Forbidden: bot was blocked by the user"},
		{&Error{Reason: ReasonTimeout, Ambiguous: true, Description: "EOF"},
			"telegram: timeout (may have been delivered): EOF"},
		{&Error{Reason: reasonTransport}, "telegram: transport"},
		{nil, "<nil>"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := fmt.Sprintf("%v", tc.err); got != tc.want {
			t.Errorf("%%v = %q, want %q", got, tc.want)
		}
	}
	if (*Error)(nil).Temporary() {
		t.Error("nil *Error is temporary")
	}
}

func TestReasonsTemporary(t *testing.T) {
	t.Parallel()
	want := map[Reason]bool{
		ReasonRateLimited: true, ReasonServerError: true, reasonTransport: true, ReasonTimeout: true,
		ReasonUnauthorized: true, reasonNotFound: true,
		ReasonParseEntities: false, ReasonMigrated: false, ReasonBlocked: false, reasonKicked: false,
		reasonForbidden: false, ReasonChatNotFound: false, ReasonTooLong: false, ReasonBadRequest: false,
		reasonNotModified: false, ReasonMessageGone: false, reasonPhotoRejected: false, ReasonPaidRefused: false,
	}
	got := Reasons()
	if len(got) != len(want) {
		t.Fatalf("Reasons() has %d entries, want %d", len(got), len(want))
	}
	for _, r := range got {
		w, ok := want[r]
		if !ok {
			t.Errorf("unexpected reason %q", r)
			continue
		}
		if r.Temporary() != w {
			t.Errorf("%s.Temporary() = %t, want %t", r, r.Temporary(), w)
		}
	}
	got[0] = "mutated"
	if Reasons()[0] == "mutated" {
		t.Error("Reasons returns the package's own slice")
	}
}

func BenchmarkSend(b *testing.B) {
	srv := startServer(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, okSendBody)
	})
	c, err := New(Config{Token: testToken, APIURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx := context.Background()
	m := Message{Chat: "-100123", Text: "disk full", ParseMode: parseModeHTML, DisableLinkPreview: true}
	g := slot(b) // one grant for every request: the benchmark measures the client alone
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, g, m); err != nil {
			b.Fatal(err)
		}
	}
}
