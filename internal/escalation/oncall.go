package escalation

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// Roster is the one question the engine asks about on-call: who is on
// call in the named schedule at an instant, overrides included (found is
// false when nobody is, or there is no such schedule). The roster of
// package internal/oncall/roster answers it.
type Roster interface {
	OnCall(ctx context.Context, schedule string, at time.Time) (u oncall.User, found bool, err error)
}
