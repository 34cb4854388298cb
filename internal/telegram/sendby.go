package telegram

import (
	"context"
	"errors"
	"time"
)

// ErrLate is what a call returns, without writing anything, when its
// request would leave after the send-by time of its context (WithSendBy).
// Nothing reached Telegram: the caller may take a new slot and try again.
var ErrLate = errors.New("telegram: the request would leave after its send-by time; nothing was sent")

type sendByKey struct{}

// WithSendBy returns a context under which a call gives up with ErrLate
// when its request is about to leave after t. The check is made at the
// last moments the client controls: after the request is built, just
// before it is handed to the HTTP transport, and again when the transport,
// holding a connection, starts on the body (lateBody), so a send slot is
// not used late because the process was busy, or a connection had to be
// opened, between deciding to send and sending.
func WithSendBy(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, sendByKey{}, t)
}

// late reports whether ctx's send-by time has passed.
func late(ctx context.Context) bool {
	by, ok := ctx.Value(sendByKey{}).(time.Time)
	return ok && time.Now().After(by)
}

type cutOffKey struct{}

// cutOff reports whether ctx's cut-off (ratelimit.Grant.CutOff) has
// passed: the request may not leave even on a warm connection.
func cutOff(ctx context.Context) bool {
	cut, ok := ctx.Value(cutOffKey{}).(time.Time)
	return ok && time.Now().After(cut)
}
