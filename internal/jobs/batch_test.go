package jobs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
)

// TestPrepareAndBatch: Prepare validates a message as Enqueue does and
// refuses what a batch cannot store; EnqueueBatch stores the prepared
// messages once, however often it is called with them.
func TestPrepareAndBatch(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{MaxRetry: 4})
	ctx := context.Background()

	_, err := enq.Prepare(jobs.Request{Queue: jobs.QueueBroadcast, Coalesce: true, CheckMarkup: true,
		Message: jobs.SendMessage{Chat: "1", Text: "<b>x", ParseMode: "HTML", Thread: &jobs.Thread{Key: "k", Mode: jobs.ThreadOpen}}})
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) != 3 {
		t.Fatalf("Prepare = %v; want thread, coalesce and text refused", err)
	}
	m, err := enq.Prepare(jobs.Request{Queue: jobs.QueueBroadcast, Message: jobs.SendMessage{Chat: " 42 ", Text: "hi"}})
	if err != nil || m.Chat != "42" || m.MaxRetry == nil || *m.MaxRetry != 4 || m.CreatedAt.IsZero() {
		t.Fatalf("Prepare = %+v, %v", m, err)
	}
	items := []jobs.BatchItem{{TaskID: "b:42", Message: m}, {TaskID: "b:43", Message: m}}
	for want := 2; want >= 0; want -= 2 {
		if n, err := enq.EnqueueBatch(ctx, jobs.QueueBroadcast, items); err != nil || n != want {
			t.Fatalf("EnqueueBatch = %d, %v; want %d", n, err, want)
		}
	}
	if _, err := enq.EnqueueBatch(ctx, "nope", items); err == nil {
		t.Error("EnqueueBatch into an unknown queue succeeded")
	}
	if !enq.Accepts(jobs.QueueBroadcast) || enq.Accepts("nope") {
		t.Error("Accepts disagrees with the queues")
	}
}
