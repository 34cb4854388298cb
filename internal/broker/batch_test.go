package broker

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/test/redistest"
)

// TestContractBatchEncoding: a task EnqueueBatch stores is byte for byte
// the one asynq's client stores for the same task and options, in the same
// layout (hash fields, pending list), and asynq's Inspector reads it back.
func TestContractBatchEncoding(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	opts := BatchOptions{Queue: "bq", MaxRetry: RetryCeiling, Timeout: 2 * time.Minute, Retention: 24 * time.Hour}
	task := BatchTask{ID: "b1-42", Type: "telegram:send_message", Payload: []byte(`{"v":1,"chat":"42","text":"hi"}`)}

	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask(task.Type, task.Payload), asynq.Queue(opts.Queue),
		asynq.TaskID(task.ID), asynq.MaxRetry(opts.MaxRetry), asynq.Timeout(opts.Timeout), asynq.Retention(opts.Retention)); err != nil {
		t.Fatal(err)
	}
	want := rdb.HGet(ctx, taskKey(opts.Queue, task.ID), "msg").Val()
	if err := rdb.Del(ctx, taskKey(opts.Queue, task.ID), PendingKey(opts.Queue)).Err(); err != nil {
		t.Fatal(err)
	}

	n, err := EnqueueBatch(ctx, rdb, opts, []BatchTask{task})
	if err != nil || n != 1 {
		t.Fatalf("EnqueueBatch = %d, %v; want 1, nil", n, err)
	}
	if got := rdb.HGet(ctx, taskKey(opts.Queue, task.ID), "msg").Val(); !bytes.Equal([]byte(got), []byte(want)) {
		t.Errorf("stored message differs from asynq's:\n got %x\nwant %x", got, want)
	}
	if st := rdb.HGet(ctx, taskKey(opts.Queue, task.ID), "state").Val(); st != "pending" {
		t.Errorf("state = %q, want pending", st)
	}
	if ids := rdb.LRange(ctx, PendingKey(opts.Queue), 0, -1).Val(); len(ids) != 1 || ids[0] != task.ID {
		t.Errorf("pending list = %v, want [%s]", ids, task.ID)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	info, err := insp.GetTaskInfo(opts.Queue, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != asynq.TaskStatePending || info.Type != task.Type || string(info.Payload) != string(task.Payload) ||
		info.MaxRetry != opts.MaxRetry || info.Timeout != opts.Timeout || info.Retention != opts.Retention {
		t.Errorf("Inspector reads %+v", info)
	}
	if qs, _ := insp.Queues(); len(qs) != 1 || qs[0] != opts.Queue {
		t.Errorf("Inspector lists queues %v, want [%s]", qs, opts.Queue)
	}
}

// TestBatchSkipsKnownIDs: tasks whose ids the queue holds are skipped, so
// a repeated batch adds only what the first one missed, and chunks beyond
// the first are stored too.
func TestBatchSkipsKnownIDs(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	opts := BatchOptions{Queue: "bq"}
	tasks := make([]BatchTask, BatchChunk+10)
	for i := range tasks {
		tasks[i] = BatchTask{ID: "t" + strconv.Itoa(i), Type: "x", Payload: []byte("p")}
	}
	if n, err := EnqueueBatch(ctx, rdb, opts, tasks[:5]); err != nil || n != 5 {
		t.Fatalf("first batch = %d, %v; want 5", n, err)
	}
	// The script cache is flushed, as after a restart: the batch loads it again.
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := EnqueueBatch(ctx, rdb, opts, tasks)
	if err != nil || n != len(tasks)-5 {
		t.Fatalf("second batch = %d, %v; want %d", n, err, len(tasks)-5)
	}
	if l := rdb.LLen(ctx, PendingKey(opts.Queue)).Val(); l != int64(len(tasks)) {
		t.Errorf("pending holds %d, want %d", l, len(tasks))
	}
	// A real asynq server takes them: the batch's tasks are ordinary ones.
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 4, Queues: map[string]int{opts.Queue: 1},
		TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel})
	done := make(chan string, len(tasks))
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		done <- id
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	seen := map[string]bool{}
	for len(seen) < len(tasks) {
		select {
		case id := <-done:
			seen[id] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("asynq handled %d of %d batch tasks", len(seen), len(tasks))
		}
	}
}
