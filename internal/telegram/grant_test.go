package telegram

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// No request without a slot: Send and Edit refuse, before any request, a
// call without the limiter's grant, and an edit in a paid slot; the paid
// flag on the wire is the grant's, whatever the message says.
func TestRequestsNeedTheirGrant(t *testing.T) {
	t.Parallel()
	url, reqs := captureServer(t)
	c, _ := newTestClient(t, url, 0)
	ctx := context.Background()
	if _, err := c.Send(ctx, ratelimit.Grant{}, Message{Chat: "42", Text: "no slot"}); !errors.Is(err, ErrNoSlot) {
		t.Errorf("send without a grant: %v, want ErrNoSlot", err)
	}
	if _, err := c.Edit(ctx, ratelimit.Grant{}, Edit{Chat: "42", MessageID: 7, Text: "no slot"}); !errors.Is(err, ErrNoSlot) {
		t.Errorf("edit without a grant: %v, want ErrNoSlot", err)
	}
	if _, err := c.Edit(ctx, paidSlot(t, true), Edit{Chat: "42", MessageID: 7, Text: "paid"}); !errors.Is(err, ErrPaidSlot) {
		t.Errorf("edit in a paid slot: %v, want ErrPaidSlot", err)
	}
	// A slot asked for as unpaid while paid broadcasts are on is an edit's.
	if g := grantOf(t, true, true); g.Paid() || !g.Unpaid() {
		t.Errorf("unpaid ask under paid broadcasts: paid=%v unpaid=%v; want a free slot", g.Paid(), g.Unpaid())
	}
	select {
	case r := <-reqs:
		t.Fatalf("a request left without its grant: %v", r.form)
	default:
	}
	for _, tc := range []struct {
		grant, msg bool
	}{{true, false}, {false, true}} {
		if _, err := c.Send(ctx, paidSlot(t, tc.grant), Message{Chat: "42", Text: "news", AllowPaidBroadcast: tc.msg}); err != nil {
			t.Fatal(err)
		}
		if got := (<-reqs).form.Get("allow_paid_broadcast") == "true"; got != tc.grant {
			t.Errorf("grant paid=%v, message paid=%v: the request carried allow_paid_broadcast=%v, want the grant's", tc.grant, tc.msg, got)
		}
	}
	// The grant's send-by time binds like WithSendBy's.
	if _, err := c.Send(ctx, slot(t).Until(time.Now().Add(-time.Millisecond)), Message{Chat: "42", Text: "late"}); !errors.Is(err, ErrLate) {
		t.Errorf("send after the grant's send-by time: %v, want ErrLate", err)
	}
}
