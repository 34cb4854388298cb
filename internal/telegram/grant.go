package telegram

import (
	"context"
	"errors"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// ErrNoSlot is what Send and Edit return, without any request, when they
// are not given a valid grant of a slot (ratelimit.Grant): nothing reaches
// Telegram unless the limiter granted that message a slot. Meeting it is a
// bug in the caller; nothing was sent.
var ErrNoSlot = errors.New("telegram: no slot was granted for this request; nothing was sent")

// ErrPaidSlot is what Edit returns, without any request, for a slot given
// under the paid limit: editMessageText cannot carry allow_paid_broadcast,
// so an edit must take a slot asked for as unpaid (ratelimit.Ask.Unpaid).
var ErrPaidSlot = errors.New("telegram: an edit cannot use a paid-broadcast slot; nothing was sent")

// granted checks g before a send or an edit and returns ctx bounded by its
// send-by time (WithSendBy), or the error that stops the call: ctx's own
// when it is done, ErrNoSlot for an invalid grant.
func granted(ctx context.Context, g ratelimit.Grant) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return ctx, err
	}
	if !g.Valid() {
		return ctx, ErrNoSlot
	}
	if by := g.By(); !by.IsZero() {
		if cur, ok := ctx.Value(sendByKey{}).(time.Time); !ok || by.Before(cur) {
			ctx = WithSendBy(ctx, by)
		}
	}
	if cut := g.CutOff(); !cut.IsZero() {
		ctx = context.WithValue(ctx, cutOffKey{}, cut)
	}
	return ctx, nil
}
