package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/broker"
)

// TooLateError is a cancel of a message that is sent, or being sent, or a
// retry of a message that has not failed.
type TooLateError struct {
	Status Status
	Why    string
}

func (e *TooLateError) Error() string { return e.Why }

// Cancel stops message id before it is sent. A message waiting in Redis
// (queued, scheduled, in a digest group) is removed at once and settled as
// cancelled. A message a worker holds (waiting in memory for its slot) is
// marked: the worker settles it as cancelled when it next checks, which it
// does with every slot, and the status comes back with Cancelling set. A
// message whose sending began, or that is settled, is a *TooLateError.
// may, when set, decides from the message's status whether the caller may
// act on it; a message it refuses is ErrNotFound.
func (m *Messages) Cancel(ctx context.Context, id, by string, may func(Status) bool) (Status, error) {
	f, err := m.found(ctx, id, may)
	if err != nil {
		return Status{}, err
	}
	switch {
	case f.st.State.Settled():
		return f.st, &TooLateError{Status: f.st, Why: fmt.Sprintf("the message is %s already", f.st.State)}
	case f.st.PartsSent > 0:
		return f.st, &TooLateError{Status: f.st, Why: fmt.Sprintf("%d of its parts are sent already", f.st.PartsSent)}
	case f.st.State == StateSending:
		return m.cancelHeld(ctx, f, by)
	}
	if err := m.insp.DeleteTask(f.task.Queue, id); err != nil {
		if errors.Is(err, asynq.ErrTaskNotFound) {
			return m.Cancel(ctx, id, by, may) // settled or taken meanwhile: look again
		}
		// A worker took it between the look and the delete.
		return m.cancelHeld(ctx, f, by)
	}
	r := Record{State: StateCancelled, Chat: f.st.Chat, Queue: f.st.Queue, From: f.st.From, Attempts: f.st.Attempts,
		Created: millisOf(f.st.CreatedAt), Settled: time.Now().UnixMilli(), Reason: "cancelled by " + by, Progress: progressOf(f.raw)}
	if err := m.store.Put(ctx, f.bot, id, r); err != nil {
		return Status{}, err
	}
	return StatusOf(id, f.bot, r), nil
}

// cancelHeld marks a message a worker holds.
func (m *Messages) cancelHeld(ctx context.Context, f found, by string) (Status, error) {
	if err := m.store.markCancel(ctx, f.bot, f.st.ID, by); err != nil {
		return Status{}, err
	}
	f.st.State, f.st.Cancelling = StateSending, true
	return f.st, nil
}

// Retry runs a failed message again, from the first part not yet sent; may
// is as for Cancel.
func (m *Messages) Retry(ctx context.Context, id string, may func(Status) bool) (Status, error) {
	f, err := m.found(ctx, id, may)
	if err != nil {
		return Status{}, err
	}
	switch {
	case f.st.State != StateFailed:
		return f.st, &TooLateError{Status: f.st, Why: fmt.Sprintf("only a failed message can be retried; this one is %s", f.st.State)}
	case f.task == nil:
		return m.rebuild(ctx, f)
	case f.task.State != asynq.TaskStateArchived:
		return f.st, &TooLateError{Status: f.st, Why: fmt.Sprintf("it is being retried already (its task is %s)", f.task.State)}
	}
	return m.rerun(ctx, f)
}

// rerun reopens f's record and runs its archived task.
func (m *Messages) rerun(ctx context.Context, f found) (Status, error) {
	if f.record != nil {
		if err := m.store.reopen(ctx, f.bot, f.st.ID, *f.record); err != nil {
			return Status{}, err
		}
	}
	if err := m.insp.RunTask(f.task.Queue, f.st.ID); err != nil {
		return Status{}, fmt.Errorf("ledger: run %s: %w", f.st.ID, err)
	}
	// Wake an idle worker as a new message does; without it the task
	// waited for an idle poll (up to 10 s). A lost notice only delays it.
	_ = broker.Notify(ctx, m.store.rdb, f.task.Queue)
	st := f.st
	st.State, st.SettledAt = StateQueued, nil
	return st, nil
}

// found is find, with may's verdict (nil: anyone may).
func (m *Messages) found(ctx context.Context, id string, may func(Status) bool) (found, error) {
	f, err := m.find(ctx, id)
	if err == nil && may != nil && !may(f.st) {
		return found{}, ErrNotFound
	}
	return f, err
}

func millisOf(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}
