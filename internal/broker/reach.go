package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// reach follows whether this process could talk to a Redis master: it
// remembers when a command last failed because no master answered (a
// refused dial, a timeout, a replica that will not take writes, a Redis
// still loading). The lease sweeper asks it before handing tasks on.
//
// A lease goes unextended when its worker died, and also when nobody could
// reach Redis: during a failover whose promotion comes later than the lease
// recovery time, every lease in the fleet goes stale together. Once a
// master answers again, the workers that are alive extend their leases at
// their next heartbeat (asynq's, every 5 s) and write the records of the
// sends that were on the wire; a sweep in between would hand those tasks to
// other workers, and a task whose send Telegram had already taken was sent
// twice (TestSlowPromotionSendsOnce). So after an outage the sweeper waits
// until Redis has answered steadily for reachGrace.
type reach struct {
	now func() time.Time

	mu   sync.Mutex
	lost time.Time // when a command last failed for want of a master
}

// reachGrace is how long Redis must answer without an outage before a
// sweep may hand tasks on: two of asynq's heartbeat intervals, so that a
// live worker whose client finds the new master a little later than this
// one's still extends its leases in time.
const reachGrace = 2 * leaseMargin

func newReach() *reach { return &reach{now: time.Now} }

// steady reports whether no command has failed for want of a master for
// the last d.
func (r *reach) steady(d time.Duration) bool { return r.left(d) <= 0 }

// left is how long until steady(d) holds, if nothing fails meanwhile.
func (r *reach) left(d time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost.IsZero() {
		return 0
	}
	return d - r.now().Sub(r.lost)
}

// saw records the outcome of a command or pipeline.
func (r *reach) saw(err error) {
	if !noMaster(err) {
		return
	}
	r.mu.Lock()
	r.lost = r.now()
	r.mu.Unlock()
}

// noMaster reports whether err says that no master answered, rather
// than that one answered with an error (a missing key, a script's error)
// or that the caller gave up (a context that ended, which blocking reads
// with a deadline do as a matter of course).
func noMaster(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) {
		// Replies from a Redis that is not a serving master.
		msg := re.Error()
		for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	// Anything else came from the connection: a refused dial, a reset, a
	// timeout, a closed pool.
	return true
}

// hook is the go-redis hook that feeds saw.
func (r *reach) hook() redis.Hook { return reachHook{r} }

type reachHook struct{ r *reach }

func (reachHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reachHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.r.saw(err)
		return err
	}
}

func (h reachHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.r.saw(err)
		return err
	}
}
