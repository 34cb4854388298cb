package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/test/redistest"
)

// TestContractSettleAfterOutage: a handler's failure that asynq could not
// write because Redis was down lands (the task moves to retry, with the
// handler's error) at the syncer's next try once Redis is back. asynq v0.26
// retries with a cancelled context; newSettleHook lets that try run. The
// scripts asynq sends to take a task out of the active list (here retry and
// done) are the ones settles recognises.
func TestContractSettleAfterOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	rdb := srv.Client(t)
	rec := &recorder{}
	rdb.AddHook(rec)
	rdb.AddHook(newSettleHook())
	const q = "low"
	started := make(chan string, 2)
	release := make(chan struct{})
	as := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{q: 1}, TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour },
	})
	if err := as.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		started <- id
		if id == "done-me" {
			return nil
		}
		<-release
		return errors.New("boom")
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Shutdown)
	client := asynq.NewClientFromRedisClient(rdb)
	for _, id := range []string{"done-me", "settle-me"} {
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
	}
	receive(t, started, "the first task")
	if id := receive(t, started, "the second task"); id != "settle-me" {
		t.Fatalf("second task %q", id)
	}
	srv.Kill()
	close(release)
	// asynq's first try to move the task to retry fails: Redis is down.
	waitFor(t, "the failed retry write", func() bool {
		for _, c := range rec.snapshot() {
			if settles(c.cmd) && c.err != nil && strings.HasSuffix(argString(c.cmd, 4), ":active") {
				return true
			}
		}
		return false
	})
	srv.Restart(t)
	waitFor(t, "the task in retry with its error", func() bool {
		st, err := rdb.HGet(context.Background(), taskKey(q, "settle-me"), "state").Result()
		return err == nil && st == "retry"
	})
	var done, retry bool
	for _, c := range rec.snapshot() {
		switch {
		case !settles(c.cmd):
		case strings.HasSuffix(argString(c.cmd, 3), ":active"):
			done = true
		case strings.HasSuffix(argString(c.cmd, 4), ":active"):
			retry = true
		}
	}
	if !done || !retry {
		t.Fatalf("settles recognised done=%v retry=%v among asynq's scripts", done, retry)
	}
}

func argString(c interface{ Args() []any }, i int) string {
	args := c.Args()
	if i >= len(args) {
		return ""
	}
	s, _ := args[i].(string)
	return s
}
