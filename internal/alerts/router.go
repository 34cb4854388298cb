package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
)

// RouterConfig tunes a Router. The zero value is usable.
type RouterConfig struct {
	// Logger receives template fallbacks and reloads; default slog.Default().
	Logger *slog.Logger
	// MaxTextLen bounds a rendered message in UTF-16 code units; longer
	// renderings are shortened (the body first). Default
	// jobs.DefaultMaxTextLen; set it to the Enqueuer's Limits.MaxTextLen
	// when that is smaller.
	MaxTextLen int
	// Now is the clock that stamps alerts without a time; default time.Now.
	Now func() time.Time
	// Bots are the bots routes may name, for Reload and for the check of
	// every message before it is enqueued (jobs.Limits.Bots); nil accepts
	// any well-formed name. Give the table the same list (ParseOptions).
	Bots []string
	// Silences, when set, is asked about every alert before it is routed:
	// an alert a silence catches is recorded there and not sent. Package
	// silences implements it.
	Silences Silencer
	// Ledger, when set, records each silenced alert as a message settled
	// as silenced, under the id Dispatched.Silenced gives it, so that GET
	// /v1/messages/{id} answers for it as for any message.
	Ledger *ledger.Store
	// Holder, when set, keeps the messages of routes in their quiet hours
	// until the window ends. Without one, quiet hours do not apply (a
	// warning says so when the routing file has them).
	Holder Holder
	// Redis, when set, gives alerts threads and buttons: the Router reads
	// whether an alert's thread is open in a chat (a firing alert that
	// repeats replies to its first message) and stores what a message's
	// buttons act on. Without it messages carry neither (a warning says
	// so when the routing file asks for buttons).
	Redis redis.Cmdable
	// Escalations, when set (with Redis), begins the escalation of the
	// firing alerts of routes that name an escalation policy, and ends it
	// when they resolve.
	Escalations Escalator
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c RouterConfig) WithDefaults() RouterConfig {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxTextLen <= 0 {
		c.MaxTextLen = jobs.DefaultMaxTextLen
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// enqueuer is the part of *jobs.Enqueuer the Router uses.
type enqueuer interface {
	Enqueue(ctx context.Context, req jobs.Request) (jobs.Result, error)
}

// Router is the Dispatcher of alerts: it matches each alert against the
// current routing Table, renders one message per destination of every
// matching route and enqueues them. The table can be replaced at any time
// (Reload, Swap); a Dispatch call uses the table that was current when it
// started from its first alert to its last.
type Router struct {
	table atomic.Pointer[Table]
	enq   enqueuer
	cfg   RouterConfig
}

var _ Dispatcher = (*Router)(nil)

// NewRouter returns a Router that routes through table and stores tasks
// with enq. Both are required.
func NewRouter(table *Table, enq *jobs.Enqueuer, cfg RouterConfig) (*Router, error) {
	if table == nil {
		return nil, errors.New("alerts: NewRouter needs a routing table: load one with LoadRoutes")
	}
	if enq == nil {
		return nil, errors.New("alerts: NewRouter needs a *jobs.Enqueuer")
	}
	r := &Router{enq: enq, cfg: cfg.WithDefaults()}
	r.table.Store(table)
	r.warnQuietIgnored(table)
	r.warnButtonsIgnored(table)
	r.warnEscalationsIgnored(table)
	return r, nil
}

// Table returns the routing table in use now.
func (r *Router) Table() *Table { return r.table.Load() }

// Swap makes t the routing table for every Dispatch that starts from now
// on and returns the previous one. Calls already running finish on the
// table they started with. A nil t changes nothing.
func (r *Router) Swap(t *Table) *Table {
	if t == nil {
		return r.table.Load()
	}
	return r.table.Swap(t)
}

// Reload parses the routing file at path and, when it is valid, swaps it
// in. On error the current table stays in use and the error (naming the
// file, line and column) is returned for the caller to log.
func (r *Router) Reload(path string) error {
	t, err := LoadRoutesWith(path, ParseOptions{Bots: r.cfg.Bots})
	if err != nil {
		return err
	}
	r.Swap(t)
	r.warnQuietIgnored(t)
	r.warnButtonsIgnored(t)
	r.warnEscalationsIgnored(t)
	r.cfg.Logger.Info("routing file reloaded", "path", path, "routes", len(t.routes), "webhooks", len(t.webhooks))
	return nil
}

// Dispatch routes a batch of alerts. Every alert is normalised, matched
// and rendered before anything is enqueued, so an invalid alert or one
// without a route leaves Redis untouched. Field names in a
// *jobs.ValidationError are the alert's JSON names, prefixed with
// "alerts[i]." when the batch holds more than one alert. An alert with a
// fingerprint gets, per destination, the idempotency key
// fingerprint/route/destination, so a retried batch delivers nothing twice.
//
// With RouterConfig.Redis, messages that are not coalesced carry a thread
// (jobs.Thread) keyed by the alert's identity, the route and the
// destination (threadKey): a firing alert opens it, or replies to it when
// it is open already (a repeat); a resolved alert replies to or edits its
// first message, or comes on its own, per the route's on_resolve, and
// closes it. A firing alert of a route with buttons gets its keyboard
// (package callbacks).
//
// With RouterConfig.Silences, an alert that a silence catches needs no
// route: it is recorded with the silence's id (Dispatched.Silenced) and
// sends nothing. With RouterConfig.Holder, the messages of a route in its
// quiet hours, for alerts that are not critical, are handed to the Holder
// until the window ends (Dispatched.Held) instead of being enqueued. With
// RouterConfig.Escalations, a firing alert of a route that names an
// escalation policy begins its escalation once its messages are enqueued,
// and a resolved one ends it.
func (r *Router) Dispatch(ctx context.Context, batch []Alert) (Dispatched, error) {
	now := r.cfg.Now()
	outs, caught, err := r.plan(ctx, batch, now)
	if err != nil {
		return Dispatched{}, err
	}
	// Rendering keeps messages valid; checking them here anyway means a
	// bug cannot leave half a batch in Redis.
	lim := jobs.Limits{Bots: r.cfg.Bots, MaxTextLen: r.cfg.MaxTextLen}
	for i := range outs {
		m := outs[i].req.Message
		if err := m.Normalize(lim, now); err != nil {
			return Dispatched{}, fmt.Errorf("alerts: route produced an invalid message (a bug): %v", err)
		}
	}
	if err := r.threadModes(ctx, outs); err != nil {
		return Dispatched{}, err
	}
	return r.deliver(ctx, outs, caught, now)
}

// plan normalizes every alert of batch, sets aside those a silence catches
// and renders the others for each route they match. Invalid alerts are
// reported together, their fields prefixed with their index in the batch
// when it holds several; an alert that no route takes fails the batch.
func (r *Router) plan(ctx context.Context, batch []Alert, now time.Time) ([]outgoing, []SilencedAlert, error) {
	t := r.table.Load()
	var outs []outgoing
	var caught []SilencedAlert
	var verr jobs.ValidationError
	for i := range batch {
		a := batch[i]
		prefix := ""
		if len(batch) > 1 {
			prefix = fmt.Sprintf("alerts[%d].", i)
		}
		if err := a.Normalize(now); err != nil {
			var v *jobs.ValidationError
			if !errors.As(err, &v) {
				return nil, nil, err
			}
			for _, f := range v.Fields {
				verr.Fields = append(verr.Fields, jobs.FieldError{Field: prefix + f.Field, Message: f.Message})
			}
			continue
		}
		if id, err := r.silenced(ctx, &a, now); err != nil {
			return nil, nil, err
		} else if id != "" {
			caught = append(caught, SilencedAlert{Index: i, TaskID: uuid.NewString(), Fingerprint: a.Fingerprint, SilencedBy: id, Alert: a})
			continue
		}
		routes := t.match(&a)
		if len(routes) == 0 {
			which := "the alert"
			if len(batch) > 1 {
				which = fmt.Sprintf("alerts[%d]", i)
			}
			return nil, nil, fmt.Errorf("%s (source %q, severity %s): %w", which, a.Source, a.Severity, ErrNoRoute)
		}
		for _, rt := range routes {
			h := r.holdFor(&a, rt, now)
			for _, req := range r.requests(&a, rt) {
				outs = append(outs, outgoing{req: req, hold: h, alert: &a, route: rt})
			}
		}
	}
	if len(verr.Fields) > 0 {
		return nil, nil, &verr
	}
	return outs, caught, nil
}

// deliver records the silenced alerts of a dispatch, hands the messages in
// their quiet hours to the Holder and enqueues the others, with their
// buttons. It stops at the first failure, returning what was done so far.
func (r *Router) deliver(ctx context.Context, outs []outgoing, caught []SilencedAlert, now time.Time) (Dispatched, error) {
	out := Dispatched{Messages: make([]jobs.Result, 0, len(outs))}
	if len(caught) > 0 {
		if err := r.cfg.Silences.Record(ctx, caught, now); err != nil {
			return out, err
		}
		if err := r.recordSilenced(ctx, caught, now); err != nil {
			return out, err
		}
		out.Silenced = caught
	}
	for i := range outs {
		o := &outs[i]
		if !o.hold.until.IsZero() {
			hm, err := r.held(ctx, o.req, o.hold)
			if err != nil {
				return out, err
			}
			out.Held = append(out.Held, hm)
			continue
		}
		if err := r.attachButtons(ctx, o); err != nil {
			return out, err
		}
		res, err := r.enq.Enqueue(ctx, o.req)
		if err != nil {
			return out, err
		}
		out.Messages = append(out.Messages, res)
	}
	return out, r.escalate(ctx, outs)
}

// recordSilenced writes the ledger's record of each silenced alert (in the
// default bot's space: a silenced alert has no route, so no bot).
func (r *Router) recordSilenced(ctx context.Context, caught []SilencedAlert, now time.Time) error {
	if r.cfg.Ledger == nil {
		return nil
	}
	for _, c := range caught {
		rec := ledger.Record{State: ledger.StateSilenced, Silence: c.SilencedBy, Created: ledger.Millis(now), Settled: ledger.Millis(now)}
		if err := r.cfg.Ledger.Put(ctx, keys.DefaultBot, c.TaskID, rec); err != nil {
			return err
		}
	}
	return nil
}

// outgoing is one message of a dispatch: the request, whether quiet hours
// hold it, and the alert and route it renders, for the thread and buttons
// decided just before it is enqueued.
type outgoing struct {
	req   jobs.Request
	hold  hold
	alert *Alert
	route *route
}

// requests renders a for route rt: one request per destination.
func (r *Router) requests(a *Alert, rt *route) []jobs.Request {
	text, mode := r.render(a, rt)
	queue := rt.queue
	if queue == "" {
		queue = jobs.QueueDefault
		if a.Severity == SeverityCritical {
			queue = jobs.QueueCritical
		}
	}
	silent := a.Severity == SeverityInfo
	if rt.silent != nil {
		silent = *rt.silent
	}
	// A coalesced message may end up as one line of a digest, which can
	// neither open a thread nor reply to one.
	coalesced := rt.coalesce && queue != jobs.QueueCritical
	var identity string
	if r.cfg.Redis != nil && !coalesced {
		identity = a.Identity()
	}
	reqs := make([]jobs.Request, 0, len(rt.destinations))
	for _, d := range rt.destinations {
		req := jobs.Request{
			Queue: queue,
			Message: jobs.SendMessage{
				Chat:                d.chat,
				Bot:                 rt.bot,
				Text:                text,
				ParseMode:           string(mode),
				MessageThreadID:     d.thread,
				DisableNotification: silent,
				DisableLinkPreview:  rt.noPreview,
			},
			Coalesce: rt.coalesce,
		}
		if a.ImageURL != "" {
			req.Message.Photo = &jobs.Photo{URL: a.ImageURL}
		}
		if rt.coalesce {
			item := digestItem(a)
			req.Item = &item
		}
		if a.Fingerprint != "" {
			req.Message.IdempotencyKey = idempotencyKey(a.Fingerprint, rt.name, d)
		}
		if identity != "" {
			req.Message.Thread = threadFor(a, rt, threadKey(identity, rt.name, d))
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// maxIdempotencyKey is the longest key jobs accepts.
const maxIdempotencyKey = 256

// idempotencyKey is fingerprint/route/destination, or its SHA-256 when
// that is longer than jobs accepts (keys are hashed into task ids anyway).
func idempotencyKey(fingerprint, route string, d destination) string {
	k := fingerprint + "/" + route + "/" + d.key()
	if len(k) <= maxIdempotencyKey {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}
