package reliability

import (
	"context"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
	"github.com/herald-dev/herald/test/redistest"
)

// The scenarios use the shared stack of test/fleet/fleettest.
const timeScale = fleettest.TimeScale

var heraldQueues = fleettest.Queues

type (
	stackOptions = fleettest.Options
	queueCounts  = fleettest.Counts
)

// stack gives fleettest.Stack the short names the scenarios use.
type stack struct {
	st    *fleettest.Stack
	fleet *fleet.Fleet
	fake  *telegramfake.Server
	redis *redistest.Server
	insp  *asynq.Inspector
	ctx   context.Context
}

func newStack(tb testing.TB, o stackOptions) *stack {
	tb.Helper()
	s := fleettest.Start(tb, o)
	return &stack{st: s, fleet: s.Fleet, fake: s.Fake, redis: s.Redis, insp: s.Insp, ctx: s.Ctx}
}

func (s *stack) counts() queueCounts                             { return s.st.Counts() }
func (s *stack) waitDrained(tb testing.TB)                       { s.st.WaitDrained(tb) }
func (s *stack) waitDelivered(tb testing.TB, ms []fleet.Message) { s.st.WaitDelivered(tb, ms) }

func burst(label string, n, chats int) []fleet.Message { return fleettest.Burst(label, n, chats) }

func missingTexts(ms []fleet.Message, got []telegramfake.Message) []string {
	return fleettest.MissingTexts(ms, got)
}
