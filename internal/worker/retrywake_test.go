package worker_test

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// A failed message that is retried (POST /v1/messages/{id}/retry) wakes an
// idle worker as a new message does: it is sent at once, not at the
// worker's next idle poll (MaxIdle, 10 s).
func TestRetryWakesAWorker(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	msgs := b.messages()
	b.fake.SetChat("6161", telegramfake.ChatBehavior{NotFound: true})
	res := b.send(t, jobs.SendMessage{Chat: "6161", Text: "retried"}, "")
	b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
	b.fake.SetChat("6161", telegramfake.ChatBehavior{})
	time.Sleep(500 * time.Millisecond) // the worker's dequeue rounds go idle
	if _, err := msgs.Retry(b.ctx, res.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The idle poll is 10 s: anything well under it was the wake-up.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the retried message was sent %v after the retry: no worker was woken", took)
	}
	if st := b.settledState(t, msgs, res.TaskID); st != ledger.StateSent {
		t.Fatalf("retried message settled %s", st)
	}
}
