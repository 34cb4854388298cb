package alerts

import (
	"context"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/escalation"
)

// Escalator begins the escalation of a firing alert on a route whose
// escalation: names a policy, and forgets it when the alert resolves.
// *escalation.Store implements it; the escalation.Engine takes the steps.
type Escalator interface {
	// Begin starts the escalation unless the alert has one (it fired
	// before and has not resolved). Errors wrap jobs.ErrUnavailable.
	Begin(ctx context.Context, st escalation.Start) (bool, error)
	// Resolve forgets the escalation of a resolved alert.
	Resolve(ctx context.Context, st escalation.Stop) error
}

// escalated is one alert on one escalated route, with its messages.
type escalated struct {
	alert *Alert
	route *route
	homes []escalation.Home
}

// escalations collects, from the messages of a dispatch that were
// enqueued, the alerts of routes with an escalation policy and their
// messages (homes, with the reference of their buttons, which the
// escalation's direct messages carry too), in the order of the messages. Messages held by quiet
// hours and those without a thread (a router without Redis) start none.
func escalations(outs []outgoing) []*escalated {
	var order []*escalated
	by := map[[2]any]*escalated{}
	for i := range outs {
		o := &outs[i]
		m := o.req.Message
		if o.route.escalation == "" || !o.hold.until.IsZero() || m.Thread == nil {
			continue
		}
		k := [2]any{o.alert, o.route}
		e := by[k]
		if e == nil {
			e = &escalated{alert: o.alert, route: o.route}
			by[k] = e
			order = append(order, e)
		}
		e.homes = append(e.homes, escalation.Home{Chat: m.Chat, Topic: m.MessageThreadID, Thread: m.Thread.Key, Ref: buttons.RefOf(m.Buttons)})
	}
	return order
}

// escalate begins or ends the escalations of a dispatch's alerts, once
// their messages are enqueued (the steps reply to them).
func (r *Router) escalate(ctx context.Context, outs []outgoing) error {
	if r.cfg.Escalations == nil {
		return nil
	}
	for _, e := range escalations(outs) {
		a, rt := e.alert, e.route
		if a.Status == StatusResolved {
			if err := r.cfg.Escalations.Resolve(ctx, escalation.Stop{Bot: rt.bot, Route: rt.name, Identity: a.Identity(), Homes: e.homes}); err != nil {
				return err
			}
			continue
		}
		st := escalation.Start{
			Bot: rt.bot, Route: rt.name, Identity: a.Identity(), Policy: rt.escalation, Homes: e.homes, FiredAt: a.Time,
			Alert: escalation.Subject{Title: a.Title, Severity: string(a.Severity), Source: a.Source, URL: a.URL, Labels: a.Labels},
		}
		if _, err := r.cfg.Escalations.Begin(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// hasEscalations reports whether a route of t escalates.
func (t *Table) hasEscalations() bool {
	for _, rt := range t.routes {
		if rt.escalation != "" {
			return true
		}
	}
	return t.fallback != nil && t.fallback.escalation != ""
}

// warnEscalationsIgnored logs, once per table, that t's escalations
// cannot start because the Router has no Escalator or no Redis client
// (whose threads the steps reply to).
func (r *Router) warnEscalationsIgnored(t *Table) {
	if (r.cfg.Escalations == nil || r.cfg.Redis == nil) && t.hasEscalations() {
		r.cfg.Logger.Warn("the routing file escalates alerts but this router has no escalation store or no Redis client: alerts are not escalated",
			"file", t.Source())
	}
}
