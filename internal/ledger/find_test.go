package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
)

// settlingTasks is an asynq inspector across which a worker finishes the
// message: the first task lookup finds the record written and the task
// gone, as when the send settles between the record's look and the task's.
type settlingTasks struct {
	*asynq.Inspector
	once   sync.Once
	settle func()
}

func (s *settlingTasks) GetTaskInfo(queue, id string) (*asynq.TaskInfo, error) {
	s.once.Do(s.settle)
	return s.Inspector.GetTaskInfo(queue, id)
}

// A cancel or a status asked while the worker settles the message answers
// from its record; it is never "no such message" (a CI run met this in
// TestCancelRacingSends).
func TestLookupAcrossTheSettle(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = insp.Close() })
	ctx := context.Background()
	store := ledger.NewStore(rdb, ledger.Config{})

	for _, ask := range []string{"cancel", "status"} {
		res, err := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}).Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "42", Text: ask}})
		if err != nil {
			t.Fatal(err)
		}
		tasks := &settlingTasks{Inspector: insp, settle: func() {
			r := ledger.Record{State: ledger.StateSent, Chat: "42", Queue: res.Queue, Settled: time.Now().UnixMilli()}
			if err := store.Put(ctx, keys.DefaultBot, res.TaskID, r); err != nil {
				t.Error(err)
			}
			if err := insp.DeleteTask(res.Queue, res.TaskID); err != nil {
				t.Error(err)
			}
		}}
		msgs := ledger.NewMessages(store, tasks, jobs.DefaultQueues(), nil)
		var st ledger.Status
		if ask == "cancel" {
			var late *ledger.TooLateError
			st, err = msgs.Cancel(ctx, res.TaskID, "test", nil)
			if !errors.As(err, &late) {
				t.Fatalf("cancel across the settle: %+v, %v; want too late (sent)", st, err)
			}
			st = late.Status
		} else if st, err = msgs.Status(ctx, res.TaskID); err != nil {
			t.Fatalf("status across the settle: %v", err)
		}
		if st.State != ledger.StateSent {
			t.Fatalf("%s across the settle: state %s, want sent", ask, st.State)
		}
	}
}
