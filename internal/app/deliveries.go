package app

import (
	"context"

	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/ledger"
)

// deliveries tells the escalation engine what became of the messages it
// sent, from the message ledger the workers write: a step whose every
// message failed (a user who never started the bot: 403) moves on at
// once, its reason shown in the alert's thread.
type deliveries struct{ st *ledger.Store }

func (d deliveries) Outcome(ctx context.Context, bot, taskID string) (escalation.Outcome, error) {
	r, ok, err := d.st.Get(ctx, bot, taskID)
	if err != nil || !ok || !r.State.Settled() {
		return escalation.Outcome{}, err
	}
	switch r.State {
	case ledger.StateFailed, ledger.StateCancelled:
		return escalation.Outcome{Settled: true, Failed: true, Reason: r.Reason}, nil
	}
	return escalation.Outcome{Settled: true}, nil
}
