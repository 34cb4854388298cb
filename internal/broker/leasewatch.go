package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// leaseWatch follows, for the tasks this process is handling, when asynq
// last extended their leases: it sees asynq's heartbeat extend them (a
// ZADD XX on asynq:{q}:lease, through a go-redis hook) and whether Redis
// took it. A task whose lease has not been extended for the lease recovery
// time may be in another worker's hands already: the lease sweeper of any
// worker moves it back to pending then. Its handler must not send it
// (LeaseHeld).
//
// asynq's own lease (30 s) ends the handler's context much later than the
// sweep hands the task on (15 s by default), which is how a worker cut off
// from Redis by a slow failover used to send a message that another worker
// was sending too.
type leaseWatch struct {
	// limit is how old the last extension may be when a send leaves.
	limit time.Duration
	now   func() time.Time

	mu       sync.Mutex
	extended map[string]time.Time // task id → when its lease was last extended
}

// leaseMargin is how long before the lease recovery time a task stops
// sending: one of asynq's 5 s heartbeat intervals, so that a send that
// leaves just inside the limit is still done before the sweeper looks.
const leaseMargin = 5 * time.Second

// newLeaseWatch returns a watch that allows sends while the last extension
// is at most recovery-leaseMargin old (no limit when recovery <= 0: no
// sweep hands tasks on early, and asynq's own lease ends the handler).
func newLeaseWatch(recovery time.Duration) *leaseWatch {
	w := &leaseWatch{now: time.Now, extended: map[string]time.Time{}}
	if recovery > 0 {
		w.limit = recovery - leaseMargin
	}
	return w
}

// start records a task taken now: its lease was set as it was dequeued.
func (w *leaseWatch) start(id string) {
	w.mu.Lock()
	w.extended[id] = w.now()
	w.mu.Unlock()
}

// done forgets a task whose handler returned.
func (w *leaseWatch) done(id string) {
	w.mu.Lock()
	delete(w.extended, id)
	w.mu.Unlock()
}

// age is how long ago the lease of task id was last extended (or taken).
func (w *leaseWatch) age(id string) (time.Duration, bool) {
	w.mu.Lock()
	at, ok := w.extended[id]
	w.mu.Unlock()
	return w.now().Sub(at), ok
}

// extendedAt records that Redis took an extension of the leases of ids,
// made at when.
func (w *leaseWatch) extendedAt(ids []string, when time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if prev, ok := w.extended[id]; ok && when.After(prev) {
			w.extended[id] = when
		}
	}
}

// leaseExtension recognises asynq's lease extension (ExtendLease: ZADD
// asynq:{q}:lease XX score id [score id ...]) and returns the task ids.
func leaseExtension(cmd redis.Cmder) ([]string, bool) {
	args := cmd.Args()
	if cmd.Name() != "zadd" || len(args) < 5 {
		return nil, false
	}
	key, _ := args[1].(string)
	flag, _ := args[2].(string)
	if !strings.HasSuffix(key, ":lease") || !strings.EqualFold(flag, "xx") {
		return nil, false
	}
	ids := make([]string, 0, (len(args)-3)/2)
	for i := 4; i < len(args); i += 2 {
		if id, ok := args[i].(string); ok {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// hook is the go-redis hook that sees the extensions. The time recorded is
// taken before the command leaves, which never makes a lease look younger
// than it is.
func (w *leaseWatch) hook() redis.Hook { return leaseHook{w} }

type leaseHook struct{ w *leaseWatch }

func (leaseHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (leaseHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h leaseHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ids, ok := leaseExtension(cmd)
		if !ok {
			return next(ctx, cmd)
		}
		sent := h.w.now()
		err := next(ctx, cmd)
		if err == nil && cmd.Err() == nil {
			h.w.extendedAt(ids, sent)
		}
		return err
	}
}

// ErrLeaseLost is LeaseHeld's answer for a task whose lease has not been
// extended for longer than a send may wait: the lease sweeper may have
// handed it to another worker, so this one must not send it.
var ErrLeaseLost = errors.New("the task's lease was not extended in time; another worker may hold it now")

type leaseKey struct{}

// LeaseHeld reports, for the task whose handler ctx belongs to, whether it
// may still send: nil while its lease was extended recently enough that no
// other worker can have been handed the task, ErrLeaseLost otherwise. A
// context that no Server made (a handler called directly) has no lease to
// lose.
func LeaseHeld(ctx context.Context) error {
	t, ok := ctx.Value(leaseKey{}).(leaseTask)
	if !ok || t.w.limit <= 0 {
		return nil
	}
	if age, ok := t.w.age(t.id); ok && age > t.w.limit {
		return ErrLeaseLost
	}
	return nil
}

// leaseTask is what LeaseHeld finds in a handler's context.
type leaseTask struct {
	w  *leaseWatch
	id string
}

// withLease returns ctx carrying task id's lease, which w follows.
func withLease(ctx context.Context, w *leaseWatch, id string) context.Context {
	return context.WithValue(ctx, leaseKey{}, leaseTask{w: w, id: id})
}
