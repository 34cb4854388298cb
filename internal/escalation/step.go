package escalation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall"
)

// take is one claimed escalation, taken one step (or one look) further.
type take struct {
	e     *Engine
	r     record
	cat   Catalog
	pol   Policy
	now   int64 // Redis's clock at the claim, µs
	lease int64 // the claim's lease end, µs
	log   *slog.Logger
}

// run takes the escalation's next move; ok reports that it moved.
func (t *take) run(ctx context.Context) (bool, error) {
	if t.r.State != stateActive {
		return false, t.e.store.drop(ctx, t.r.ID)
	}
	pol, ok := t.cat.Policies[t.r.Policy]
	if !ok || len(pol.Steps) == 0 {
		t.log.Warn("the escalation's policy is no longer in the routing file; the escalation ends")
		return t.e.store.advance(ctx, t.r, t.lease, t.r.Pos, stateDone, 0)
	}
	t.pol = pol
	if t.r.Pos.Phase == phaseNotify {
		if held, err := t.confirm(ctx); !held || err != nil {
			return false, err
		}
		return t.notify(ctx)
	}
	return t.watch(ctx)
}

// confirm makes sure, just before a step is sent, that the escalation is
// still active and this taker's: the batch was read at the claim, and an
// acknowledgement (or a resolution) since then must stop the step. A step
// reached by a move of this taker needs no confirmation (the move was
// that check); a step stored due (the first, a re-notification) does. It
// re-writes the position as it is, which only the lease's holder can do
// while the escalation is active.
func (t *take) confirm(ctx context.Context) (bool, error) {
	held, err := t.e.store.advance(ctx, t.r, t.lease, t.r.Pos, stateActive, t.lease)
	if held {
		t.chain(t.r.Pos)
	}
	return held, err
}

// stepOf is the step at pos: a re-notification takes the last step's
// targets and waits RepeatInterval.
func (t *take) stepOf(pos position) Step {
	if pos.Step >= len(t.pol.Steps) {
		last := t.pol.Steps[len(t.pol.Steps)-1]
		return Step{Targets: last.Targets, Wait: t.pol.RepeatInterval}
	}
	return t.pol.Steps[pos.Step]
}

// stepLabel is the step's metric label: its number, or "repeat".
func (t *take) stepLabel(pos position) string {
	if pos.Step >= len(t.pol.Steps) {
		return "repeat"
	}
	return strconv.Itoa(pos.Step + 1)
}

// key is the idempotency key of one message of the step at pos: a step
// taken again (its taker died before moving it on) sends nothing twice.
func (t *take) key(pos position, what string) string {
	return fmt.Sprintf("escalation/%s/%d.%d.%d/%s", t.r.Incident, pos.Round, pos.Step, pos.Renotify, what)
}

// notify sends the step's notifications and the thread's note, then
// waits for the step's end, looking at the messages' delivery meanwhile.
func (t *take) notify(ctx context.Context) (bool, error) {
	pos := t.r.Pos
	if stopped, err := t.silenced(ctx); stopped || err != nil {
		return stopped, err
	}
	step := t.stepOf(pos)
	next := position{Round: pos.Round, Step: pos.Step, Renotify: pos.Renotify, Phase: phaseWatch,
		Deadline: t.now + step.Wait.Microseconds()}
	var reached, missed []string
	for i, tg := range step.Targets {
		label, msg, ok, err := t.resolve(ctx, tg)
		switch {
		case err != nil:
			return false, err
		case !ok:
			missed = append(missed, label)
			next.Failed++
			continue
		case msg == nil:
			// The alert's own chat: its message is the notification.
			reached = append(reached, label)
			next.Reached++
			continue
		}
		msg.IdempotencyKey = t.key(pos, strconv.Itoa(i))
		send := t.send
		if tg.kind() != kindChat {
			send = t.sendDM
		}
		res, err := send(ctx, *msg)
		var verr *jobs.ValidationError
		switch {
		case errors.As(err, &verr):
			t.log.Error("an escalation message was refused; check the policy's targets", "target", label, "error", err)
			missed = append(missed, label+" (refused: "+verr.Error()+")")
			next.Failed++
			continue
		case err != nil:
			return false, err
		}
		reached = append(reached, label)
		next.Pending = append(next.Pending, pending{Task: res.TaskID, Label: label, DM: tg.kind() != kindChat})
	}
	if err := t.note(ctx, pos, "note", stepNote(t.pol, pos, t.elapsed(), reached, missed)); err != nil {
		return false, err
	}
	due := next.Deadline
	nobody := len(next.Pending) == 0 && next.Reached == 0
	switch {
	case nobody:
		due = t.lease // nobody to wait for: the next step follows now, here
	case len(next.Pending) > 0 && t.e.cfg.Deliveries != nil:
		due = min(due, t.now+t.e.cfg.CheckInterval.Microseconds())
	}
	moved, err := t.e.store.advance(ctx, t.r, t.lease, next, stateActive, due)
	if !moved || err != nil {
		return moved, err
	}
	t.e.cfg.Metrics.Steps.WithLabelValues(t.r.Policy, t.stepLabel(pos)).Inc()
	t.log.Info("escalation step taken", "step", t.stepLabel(pos), "round", pos.Round+1, "notified", len(reached), "missed", len(missed))
	if nobody {
		t.chain(next)
		return t.moveOn(ctx, next)
	}
	return true, nil
}

// chain makes next the position this taker holds, after a move that kept
// its lease (the due time left at the lease's end) for a move that
// follows at once.
func (t *take) chain(next position) {
	t.r.Pos, t.r.rawPos = next, next.encode()
}

// resolve turns a target into its message: nil for a chat that is one of
// the alert's homes (the alert's message is there already). ok is false
// when there is nobody to message (nobody on call); label names whom.
func (t *take) resolve(ctx context.Context, tg Target) (label string, msg *jobs.SendMessage, ok bool, err error) {
	switch tg.kind() {
	case kindChat:
		for _, h := range t.r.Homes {
			if h.Chat == tg.Chat && h.Topic == tg.Topic {
				return tg.label(), nil, true, nil
			}
		}
		m := t.notice(ctx, tg.Chat, tg.Topic, false, nil)
		return tg.label(), &m, true, nil
	case kindOnCall:
		u, found, err := t.onCall(ctx, tg.Schedule)
		if err != nil {
			return "", nil, false, err
		}
		if !found {
			return "nobody (nobody is on call in " + tg.Schedule + ")", nil, false, nil
		}
		m, err := t.direct(ctx, u.ID)
		return userLabel(u) + " (on call in " + tg.Schedule + ")", &m, err == nil, err
	}
	m, err := t.direct(ctx, tg.User.ID)
	return userLabel(tg.User), &m, err == nil, err
}

// onCall is who is on call in the schedule now, overrides included.
func (t *take) onCall(ctx context.Context, name string) (oncall.User, bool, error) {
	if t.e.cfg.Roster == nil {
		return oncall.User{}, false, nil
	}
	return t.e.cfg.Roster.OnCall(ctx, name, time.UnixMicro(t.now))
}

// silenced ends the escalation of an alert a silence catches now.
func (t *take) silenced(ctx context.Context) (bool, error) {
	if t.e.cfg.Silences == nil {
		return false, nil
	}
	id, err := t.e.cfg.Silences.Silenced(ctx, t.r.Alert)
	if err != nil || id == "" {
		return false, err
	}
	if err := t.note(ctx, t.r.Pos, "silenced", "🔕 Escalation stopped: the alert is silenced (silence "+id+")."); err != nil {
		return false, err
	}
	t.log.Info("escalation stopped: the alert is silenced", "silence", id)
	return t.e.store.advance(ctx, t.r, t.lease, t.r.Pos, stateSilenced, 0)
}

// watch looks at the delivery of the step's messages: those that failed
// are shown in the thread, and a step whose every message failed moves on
// at once. At the step's deadline it moves on in any case.
func (t *take) watch(ctx context.Context) (bool, error) {
	pos := t.r.Pos
	next := pos
	next.Pending = nil
	var failures []string
	var failedTasks string
	for _, p := range pos.Pending {
		out := Outcome{}
		if d := t.e.cfg.Deliveries; d != nil {
			var err error
			if out, err = d.Outcome(ctx, t.r.Bot, p.Task); err != nil {
				return false, err
			}
		}
		switch {
		case !out.Settled:
			next.Pending = append(next.Pending, p)
		case out.Failed:
			next.Failed++
			failures = append(failures, p.Label+": "+explain(out.Reason, p.DM))
			failedTasks += p.Task + ","
		default:
			next.Reached++
		}
	}
	allFailed := next.Reached == 0 && len(next.Pending) == 0 && next.Failed > 0
	if len(failures) > 0 {
		if err := t.note(ctx, pos, "failed/"+digest(failedTasks), failureNote(failures, allFailed)); err != nil {
			return false, err
		}
	}
	if allFailed || t.now >= pos.Deadline {
		return t.moveOn(ctx, next)
	}
	due := pos.Deadline
	if len(next.Pending) > 0 && t.e.cfg.Deliveries != nil {
		due = min(due, t.now+t.e.cfg.CheckInterval.Microseconds())
	}
	return t.e.store.advance(ctx, t.r, t.lease, next, stateActive, due)
}

// moveOn goes from the step at pos to the next: the next step, the first
// again (repeat), a re-notification (repeat_interval, critical alerts), or
// the end.
func (t *take) moveOn(ctx context.Context, pos position) (bool, error) {
	n := len(t.pol.Steps)
	next := position{Round: pos.Round, Step: pos.Step + 1, Phase: phaseNotify}
	due := t.now
	switch {
	case pos.Step < n-1:
	case pos.Step == n-1 && pos.Round < t.pol.Repeat:
		next.Round, next.Step = pos.Round+1, 0
	case t.pol.RepeatInterval > 0 && t.r.Alert.critical():
		next.Step, next.Renotify = n, pos.Renotify+1
		if pos.Step < n {
			due = t.now + t.pol.RepeatInterval.Microseconds()
		}
	default:
		if err := t.note(ctx, pos, "ended", endNote(t.pol, t.elapsed())); err != nil {
			return false, err
		}
		t.log.Info("escalation ended: nobody acknowledged")
		return t.e.store.advance(ctx, t.r, t.lease, pos, stateDone, 0)
	}
	if due > t.now {
		return t.e.store.advance(ctx, t.r, t.lease, next, stateActive, due)
	}
	// The next step is due now: this taker takes it, under its lease.
	if moved, err := t.e.store.advance(ctx, t.r, t.lease, next, stateActive, t.lease); !moved || err != nil {
		return moved, err
	}
	t.chain(next)
	return t.notify(ctx)
}

// elapsed is how long the alert has been firing.
func (t *take) elapsed() time.Duration {
	if t.r.Fired.IsZero() {
		return 0
	}
	return max(time.UnixMicro(t.now).Sub(t.r.Fired), 0)
}
