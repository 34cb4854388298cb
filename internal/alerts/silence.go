package alerts

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// Silencer is what the Router asks before an alert becomes messages.
// Package silences implements it on Redis, so that a silence created on one
// producer holds on every producer.
type Silencer interface {
	// Silenced returns the id of a silence in force at now that catches a
	// (a normalised alert), or "" when none does. An error means the
	// silences could not be read; it wraps jobs.ErrUnavailable when the
	// caller should retry.
	Silenced(ctx context.Context, a *Alert, now time.Time) (string, error)
	// Record notes the alerts of one dispatch that silences caught, so
	// that they can be listed with their silence. Its error wraps
	// jobs.ErrUnavailable when nothing was recorded.
	Record(ctx context.Context, caught []SilencedAlert, now time.Time) error
}

// Holder keeps the messages of a route in its quiet hours until the window
// ends, and then puts them into their destination's digest. Package
// silences implements it on Redis.
type Holder interface {
	// Hold stores req (a validated request with its digest Item) for
	// delivery at until. A request whose idempotency key was seen within
	// the window is a duplicate and is not held again. Errors wrap
	// jobs.ErrUnavailable when nothing was stored.
	Hold(ctx context.Context, req jobs.Request, until time.Time) (jobs.Result, error)
}

// SilencedAlert is an alert of a Dispatch call that a silence caught: it
// was not sent.
type SilencedAlert struct {
	// Index is the alert's position in the batch (0 for a single alert).
	Index int `json:"alert"`
	// TaskID names the alert in the message ledger: GET
	// /v1/messages/{task_id} says it was silenced, and by which silence.
	TaskID string `json:"task_id"`
	// Fingerprint is the alert's fingerprint, when it has one.
	Fingerprint string `json:"fingerprint,omitempty"`
	// SilencedBy is the id of the silence that caught it.
	SilencedBy string `json:"silenced_by"`
	// Alert is the normalised alert, for the record.
	Alert Alert `json:"-"`
}

// heldMessage is a message that a route's quiet hours hold: it waits in
// Redis and joins its destination's digest at Until.
type heldMessage struct {
	jobs.Result
	// Route is the route whose quiet hours hold it.
	Route string `json:"route"`
	// Until is the end of the quiet hours, when it is released.
	Until time.Time `json:"until"`
}

// hold says whether, and until when, one request of a dispatch is held.
type hold struct {
	route string
	until time.Time
	// item is the alert's digest entry.
	item jobs.DigestItem
}

// silenced asks the configured Silencer about a; "" without one.
func (r *Router) silenced(ctx context.Context, a *Alert, now time.Time) (string, error) {
	if r.cfg.Silences == nil {
		return "", nil
	}
	return r.cfg.Silences.Silenced(ctx, a, now)
}

// holdFor tells whether the requests of a for route rt are held by the
// route's quiet hours at now. Critical alerts are never held, and without
// a Holder quiet hours do not apply.
func (r *Router) holdFor(a *Alert, rt *route, now time.Time) hold {
	if rt.quiet == nil || r.cfg.Holder == nil || a.Severity == SeverityCritical {
		return hold{}
	}
	until, ok := rt.quiet.until(now)
	if !ok {
		return hold{}
	}
	return hold{route: rt.name, until: until, item: digestItem(a)}
}

// held stores a request that quiet hours hold. Its digest entry is the
// alert's, whatever the route's coalesce setting: held messages are
// delivered as a digest, so they carry no thread (nor buttons); a held
// resolution closes its alert's thread at once.
func (r *Router) held(ctx context.Context, req jobs.Request, h hold) (heldMessage, error) {
	req.Coalesce = true
	closes := req.Message.Thread != nil && req.Message.Thread.Close
	key := ""
	if closes {
		key = keys.Bot(req.Message.Bot).Thread(req.Message.Chat, req.Message.Thread.Key)
	}
	req.Message.Thread = nil
	if req.Item == nil {
		item := h.item
		req.Item = &item
	}
	res, err := r.cfg.Holder.Hold(ctx, req, h.until)
	if err != nil {
		return heldMessage{}, err
	}
	if closes {
		// The resolution will be a digest line, not a reply: close the
		// thread now, so that the alert firing again opens a new one
		// rather than answering a message from before the quiet hours.
		// Best effort: a thread left open only expires later.
		if err := r.cfg.Redis.Del(ctx, key).Err(); err != nil {
			r.cfg.Logger.Warn("could not close the thread of a resolved alert held by quiet hours", "route", h.route, "error", err)
		}
	}
	return heldMessage{Result: res, Route: h.route, Until: h.until.UTC()}, nil
}

// hasQuietHours reports whether a route of t has quiet hours.
func (t *Table) hasQuietHours() bool {
	for _, rt := range t.routes {
		if rt.quiet != nil {
			return true
		}
	}
	return t.fallback != nil && t.fallback.quiet != nil
}

// warnQuietIgnored logs, once per table, that t's quiet hours cannot apply
// because the Router has no Holder.
func (r *Router) warnQuietIgnored(t *Table) {
	if r.cfg.Holder == nil && t.hasQuietHours() {
		r.cfg.Logger.Warn("the routing file sets quiet_hours but this router has no holder for them: alerts are sent at once",
			"file", t.Source())
	}
}
