package broker

import (
	"context"

	"github.com/hibiken/asynq"
)

// Task is what a handler gets of one asynq task: its type and payload, and
// where it stands (the task id, its queue, and how many attempts at it have
// failed so far).
type Task struct {
	Type    string
	Payload []byte
	ID      string
	Queue   string
	Attempt int
}

// Handler handles one kind of task. It answers with one of the outcomes in
// outcome.go: nil when the task is done, Snooze, Retry or Archive otherwise.
// Any other error is retried by asynq's own schedule.
type Handler interface {
	Handle(ctx context.Context, t Task) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, t Task) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, t Task) error { return f(ctx, t) }

// taskOf reads a Task from asynq's task and the metadata asynq puts in ctx.
func taskOf(ctx context.Context, t *asynq.Task) Task {
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	attempt, _ := asynq.GetRetryCount(ctx)
	return Task{Type: t.Type(), Payload: t.Payload(), ID: id, Queue: queue, Attempt: attempt}
}
