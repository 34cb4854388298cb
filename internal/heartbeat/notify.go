package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// sourceHeartbeat is the Source of every heartbeat alert.
const sourceHeartbeat = "heartbeat"

// fingerprint is the idempotency key of a heartbeat's alert: kind is "down"
// or "up", and lastPing is the last ping before the outage, which names the
// outage (both alerts of one outage carry it). A retried dispatch of the
// same alert is therefore never delivered twice.
func fingerprint(name, kind string, lastPing time.Time) string {
	return "heartbeat/" + name + "/" + kind + "/" + strconv.FormatInt(lastPing.UnixNano(), 10)
}

func fmtTime(t time.Time) string { return fmtTimeIn(t, time.UTC) }

func fmtTimeIn(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}

// loc is the zone the alert shows times in: the schedule's, or UTC.
func (n notification) loc() *time.Location {
	if n.TZ != "" {
		if loc, err := loadLocation(n.TZ); err == nil {
			return loc
		}
	}
	return time.UTC
}

// expectation describes what the heartbeat expects, for the alert's body.
func (n notification) expectation() string {
	grace := usDuration(n.Grace)
	if n.Schedule != "" {
		return fmt.Sprintf("expected on the schedule %q in %s, grace %s", n.Schedule, n.TZ, grace)
	}
	return fmt.Sprintf("expected every %s, grace %s", usDuration(n.Interval), grace)
}

// alert renders the notification as the alert the routes receive.
func (n notification) alert() alerts.Alert {
	loc := n.loc()
	ft := func(t time.Time) string { return fmtTimeIn(t, loc) }
	last, at, deadline := usTime(n.LastPing), usTime(n.At), usTime(n.Deadline)
	labels := make(map[string]string, len(n.Labels)+1)
	for k, v := range n.Labels {
		labels[k] = v
	}
	labels[labelHeartbeat] = n.Name
	a := alerts.Alert{
		Severity:    alerts.Severity(n.Severity),
		Source:      sourceHeartbeat,
		Labels:      labels,
		Fingerprint: fingerprint(n.Name, n.Kind, last),
		// One key for the heartbeat's outage and its recovery: they
		// share a thread in the chat.
		Key: "heartbeat/" + n.Name,
	}
	lastPing := "Last ping: " + ft(last)
	if n.NeverPinged == "1" {
		lastPing = "No success ping since the heartbeat was created at " + ft(last)
	}
	var runTime string
	if n.RunTime != "" {
		runTime = fmt.Sprintf("\nRun time: %s.", usDuration(n.RunTime).Round(time.Millisecond))
	}
	if n.Kind == kindUp {
		a.Status = alerts.StatusResolved
		a.Title = fmt.Sprintf("Heartbeat %s is back", n.Name)
		a.Time = at
		switch n.Reason {
		case reasonFail:
			a.Body = fmt.Sprintf("Pinged successfully at %s after the failure reported at %s.\n%s (%s).",
				ft(at), ft(usTime(n.DownSince)), lastPing, n.expectation())
		case reasonRunTimeout:
			a.Body = fmt.Sprintf("Pinged at %s; the run had not finished by %s.\n%s (%s).",
				ft(at), ft(deadline), lastPing, n.expectation())
		default:
			a.Body = fmt.Sprintf("Pinged again at %s after %s without a ping.\nLast ping before: %s; overdue since %s (%s).",
				ft(at), at.Sub(last).Round(time.Second), ft(last), ft(deadline), n.expectation())
			if n.NeverPinged == "1" {
				a.Body = fmt.Sprintf("Pinged at %s, the first success ping.\nCreated at %s; overdue since %s (%s).",
					ft(at), ft(last), ft(deadline), n.expectation())
			}
		}
		a.Body += runTime
		return a
	}
	a.Status = alerts.StatusFiring
	switch n.Reason {
	case reasonFail:
		a.Title = fmt.Sprintf("Heartbeat %s failed", n.Name)
		a.Time = at
		a.Body = fmt.Sprintf("The job reported a failure at %s.%s\n%s (%s).", ft(at), runTime, lastPing, n.expectation())
		if n.Detail != "" {
			a.Body += "\n\n" + n.Detail
		}
	case reasonRunTimeout:
		a.Title = fmt.Sprintf("Heartbeat %s is overdue: its run has not finished", n.Name)
		a.Time = deadline
		a.Body = fmt.Sprintf("A run started at %s and has not finished after %s (no success ping, no failure).\n%s (%s).",
			ft(usTime(n.Started)), usDuration(n.MaxRun), lastPing, n.expectation())
	default:
		a.Title = fmt.Sprintf("Heartbeat %s is overdue", n.Name)
		a.Time = deadline
		since := "No ping since " + ft(last)
		if n.NeverPinged == "1" {
			since = "No ping since the heartbeat was created at " + ft(last)
		}
		a.Body = fmt.Sprintf("%s (%s).\nOverdue since %s.", since, n.expectation(), ft(deadline))
	}
	return a
}

// deliverer hands claimed notifications to the dispatcher and settles them
// in the outbox.
type deliverer struct {
	st      *store
	d       alerts.Dispatcher
	timeout time.Duration
	log     *slog.Logger

	// beforeHandover, when set (by tests), is called with each claimed
	// notification right before its handover is confirmed.
	beforeHandover func(notification)
}

// deliver dispatches the notifications, oldest first and, per heartbeat, in
// order: a heartbeat whose notification failed keeps its later ones for the
// retry, so a recovery never overtakes its outage. Each is confirmed with
// the outbox right before its dispatch (handover): one whose heartbeat was
// deleted since the claim, or that another replica took over, is dropped
// without a dispatch. A dispatched notification leaves the outbox; a failed
// one goes back, due at once.
// Redis being unavailable ends the round (everything left goes back).
// It returns how many were dispatched and the first error.
func (dl *deliverer) deliver(ctx context.Context, ns []notification) (int, error) {
	sort.SliceStable(ns, func(i, j int) bool {
		if ns[i].At != ns[j].At {
			return usTime(ns[i].At).Before(usTime(ns[j].At))
		}
		return ns[i].Kind == kindDown && ns[j].Kind == kindUp
	})
	sent := 0
	var first error
	held := map[string]bool{} // heartbeats with a failed notification this round
	for i, n := range ns {
		if held[n.Name] {
			dl.giveBack(ctx, n)
			continue
		}
		if dl.beforeHandover != nil {
			dl.beforeHandover(n)
		}
		ok, err := dl.st.handover(ctx, &n)
		if err != nil {
			err = fmt.Errorf("%w: confirm heartbeat alert before dispatch: %w", jobs.ErrUnavailable, err)
			dl.log.Warn("heartbeat alert not dispatched; it stays in the outbox for the next check",
				"heartbeat", n.Name, "kind", n.Kind, "error", err)
			for _, rest := range ns[i:] {
				dl.giveBack(ctx, rest)
			}
			if first == nil {
				first = err
			}
			return sent, first
		}
		if !ok {
			dl.log.Debug("heartbeat alert dropped before dispatch: its heartbeat was deleted, or another replica took it over",
				"heartbeat", n.Name, "kind", n.Kind)
			// A later notification of the same heartbeat waits for the
			// replica that has this one, so the order holds.
			held[n.Name] = true
			continue
		}
		err = dl.dispatch(ctx, n)
		var verr *jobs.ValidationError
		switch {
		case err == nil:
			sent++
			if err := dl.st.done(ctx, n); err != nil {
				// The lease runs out and another check dispatches it again;
				// the fingerprint makes that a duplicate the enqueuer drops.
				dl.log.Warn("heartbeat alert dispatched but not cleared from the outbox; it will be dispatched again (idempotently)",
					"heartbeat", n.Name, "kind", n.Kind, "error", err)
			}
			continue
		case errors.As(err, &verr):
			// It can never pass: drop it rather than retry forever.
			dl.log.Error("heartbeat alert rejected as invalid; dropped", "heartbeat", n.Name, "kind", n.Kind, "error", err)
			_ = dl.st.done(ctx, n)
			continue
		}
		if first == nil {
			first = err
		}
		dl.log.Warn("heartbeat alert not dispatched; it stays in the outbox for the next check",
			"heartbeat", n.Name, "kind", n.Kind, "error", err)
		held[n.Name] = true
		dl.giveBack(ctx, n)
		if errors.Is(err, jobs.ErrUnavailable) {
			for _, rest := range ns[i+1:] {
				dl.giveBack(ctx, rest)
			}
			return sent, first
		}
	}
	return sent, first
}

func (dl *deliverer) dispatch(ctx context.Context, n notification) error {
	ctx, cancel := context.WithTimeout(ctx, dl.timeout)
	defer cancel()
	_, err := dl.d.Dispatch(ctx, []alerts.Alert{n.alert()})
	return err
}

// giveBack releases a claimed notification; when Redis cannot be reached
// its lease simply runs out.
func (dl *deliverer) giveBack(ctx context.Context, n notification) {
	if err := dl.st.release(ctx, n); err != nil {
		dl.log.Debug("releasing a heartbeat notification failed; its lease will run out", "heartbeat", n.Name, "error", err)
	}
}
