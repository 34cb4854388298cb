package telegram

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestPaidBroadcastParameter: a message with AllowPaidBroadcast carries
// allow_paid_broadcast=true; one without carries no such field.
func TestPaidBroadcastParameter(t *testing.T) {
	t.Parallel()
	url, reqs := captureServer(t)
	c, _ := newTestClient(t, url, 0)
	for _, paid := range []bool{true, false} {
		if _, err := c.Send(context.Background(), paidSlot(t, paid), Message{Chat: "42", Text: "news"}); err != nil {
			t.Fatal(err)
		}
		form := (<-reqs).form
		if got := form.Get("allow_paid_broadcast"); paid && got != "true" || !paid && form.Has("allow_paid_broadcast") {
			t.Errorf("paid=%v: allow_paid_broadcast=%q", paid, got)
		}
	}
}

// TestPaidRefusalClassified: a refusal of a paid send that names the
// balance, Stars or paid broadcasts is ReasonPaidRefused; the same answer
// to a send without the flag, or an answer a specific reason explains, is
// not.
func TestPaidRefusalClassified(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code        int
		desc        string
		paid, plain Reason
	}{
		{400, "Bad Request: BALANCE_TOO_LOW", ReasonPaidRefused, ReasonBadRequest},
		{400, "Bad Request: not enough Stars on the bot's balance", ReasonPaidRefused, ReasonBadRequest},
		{400, "Bad Request: paid broadcasts are not enabled", ReasonPaidRefused, ReasonBadRequest},
		{403, "Forbidden: bot can't use paid broadcasts", ReasonPaidRefused, reasonForbidden},
		{400, "Bad Request: ALLOW_PAID_FLOODSKIP_DISABLED", ReasonPaidRefused, ReasonBadRequest},
		{400, `Bad Request: can't parse entities: Unsupported start tag "stars" at byte offset 0`, ReasonParseEntities, ReasonParseEntities},
		{400, "Bad Request: chat not found", ReasonChatNotFound, ReasonChatNotFound},
		{403, "Forbidden: bot was blocked by the user", ReasonBlocked, ReasonBlocked},
		{400, "Bad Request: message text is empty", ReasonBadRequest, ReasonBadRequest},
		{429, "Too Many Requests: retry after 1", ReasonRateLimited, ReasonRateLimited},
	}
	for _, tc := range cases {
		srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.code)
			_, _ = fmt.Fprintf(w, `{"ok":false,"error_code":%d,"description":%s,"parameters":{"retry_after":1}}`, tc.code, strconv.Quote(tc.desc))
		})
		c, _ := newTestClient(t, srv.URL, 0)
		for _, paid := range []bool{true, false} {
			_, err := c.Send(context.Background(), paidSlot(t, paid), Message{Chat: "42", Text: "news"})
			te, ok := AsError(err)
			want := tc.plain
			if paid {
				want = tc.paid
			}
			if !ok || te.Reason != want {
				t.Errorf("%d %q paid=%v: %v, want %s", tc.code, tc.desc, paid, err, want)
			}
		}
	}
}

// TestPaidRefusalsOfTheFake: the fake's refusals of a paid send, for a bot
// without paid broadcasts and for a balance too low, are ReasonPaidRefused,
// and their errors hold no token.
func TestPaidRefusalsOfTheFake(t *testing.T) {
	t.Parallel()
	for _, p := range []telegramfake.Paid{{}, {Enabled: true}} {
		fake, err := telegramfake.Start(telegramfake.Config{Token: testToken, PaidBroadcast: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fake.Close() })
		c, _ := newTestClient(t, fake.URL(), 0)
		var last error
		for i := range 31 {
			if _, last = c.Send(context.Background(), paidSlot(t, true), Message{Chat: strconv.Itoa(i + 1), Text: "news"}); last != nil {
				break
			}
		}
		te, ok := AsError(last)
		if !ok || te.Reason != ReasonPaidRefused || te.Temporary() {
			t.Fatalf("paid %+v: %v, want a refusal of the paid broadcast", p, last)
		}
		want := telegramfake.ErrPaidNotEnabled
		if p.Enabled {
			want = telegramfake.ErrBalanceTooLow
		}
		if te.Description != want {
			t.Errorf("paid %+v: description %q, want %q", p, te.Description, want)
		}
		if strings.Contains(fmt.Sprintf("%v %+v %#v", last, last, last), testToken) {
			t.Fatalf("the error shows the token: %v", last)
		}
	}
}
