package reliability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// fxAsynqArchiveCap is how many archived tasks asynq keeps per queue (its
// maxArchiveSize); older ones are dropped from the archive.
const fxAsynqArchiveCap = 10_000

// fxFailureRun is what one permanent-failure burst measured.
type fxFailureRun struct {
	Messages  int           // messages enqueued
	Enqueue   time.Duration // time to enqueue them all
	Drain     time.Duration // time from the first enqueue until the stream held them all
	StreamLen int64         // XLEN of the failure stream
	Archived  int           // asynq's archived count for the queue
	Recorded  int           // distinct enqueued task ids found in the stream
	Lost      int           // enqueued task ids missing from the stream
	BadFields int           // stream entries without task_id, queue or reason=blocked
	Trimmed   int           // enqueued tasks asynq no longer knows (dropped from its archive)
}

// fxRunPermanentFailures starts redis-server, the fake Bot API with its
// limits off and every one of 50 private chats blocked, and an in-process
// worker with limits far above the load; it enqueues n messages to those
// chats and waits until the failure stream holds n entries.
func fxRunPermanentFailures(tb testing.TB, n int) fxFailureRun {
	tb.Helper()
	const chats = 50
	srv := redistest.Start(tb)
	off := telegramfake.Unlimited
	fake, err := telegramfake.Start(telegramfake.Config{Private: off, Group: off, Bot: off, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatalf("start fake Bot API: %v", err)
	}
	tb.Cleanup(func() { _ = fake.Close() })
	for c := 0; c < chats; c++ {
		fake.SetChat(strconv.Itoa(5000+c), telegramfake.ChatBehavior{Blocked: true})
	}

	sender, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fake.URL(), Timeout: 10 * time.Second})
	if err != nil {
		tb.Fatalf("telegram client: %v", err)
	}
	fast := ratelimit.Unlimited
	w, err := worker.New(worker.Config{
		Redis:       &redis.UniversalOptions{Addrs: []string{srv.Addr}},
		Sender:      sender,
		Limits:      ratelimit.Config{Bot: fast, Private: fast, Group: fast},
		Concurrency: 64,
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatalf("worker.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			tb.Errorf("worker.Run: %v", err)
		}
	}()

	rdb := srv.Client(tb)
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	ids := make([]string, n)
	start := time.Now()
	const senders = 16
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < n; i += senders {
				res, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{
					Chat: strconv.Itoa(5000 + i%chats), Text: fmt.Sprintf("alert #%d", i),
				}})
				if err != nil {
					errs <- fmt.Errorf("enqueue #%d: %w", i, err)
					return
				}
				ids[i] = res.TaskID
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	run := fxFailureRun{Messages: n, Enqueue: time.Since(start)}

	// Nothing signals "the n-th failure was recorded" across Redis, so poll
	// XLEN with the context's deadline.
	for {
		l, err := rdb.XLen(ctx, keys.Failures()).Result()
		if err != nil {
			tb.Fatalf("XLEN %s: %v", keys.Failures(), err)
		}
		if l >= int64(n) {
			break
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("failure stream holds %d of %d entries when the deadline passed", l, n)
		case <-time.After(20 * time.Millisecond):
		}
	}
	run.Drain = time.Since(start)

	run.StreamLen, err = rdb.XLen(ctx, keys.Failures()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	recorded := make(map[string]bool, n)
	next := "-"
	for {
		entries, err := rdb.XRangeN(ctx, keys.Failures(), next, "+", 5000).Result()
		if err != nil {
			tb.Fatalf("XRANGE %s: %v", keys.Failures(), err)
		}
		for _, e := range entries {
			id, _ := e.Values["task_id"].(string)
			q, _ := e.Values["queue"].(string)
			reason, _ := e.Values["reason"].(string)
			if id == "" || q != jobs.QueueDefault || reason != ledger.ReasonChatBlocked {
				run.BadFields++
				if run.BadFields <= 3 {
					tb.Logf("unexpected failure entry %s: %v", e.ID, e.Values)
				}
			}
			recorded[id] = true
		}
		if len(entries) < 5000 {
			break
		}
		next = "(" + entries[len(entries)-1].ID
	}
	for _, id := range ids {
		if recorded[id] {
			run.Recorded++
		} else {
			run.Lost++
		}
	}

	insp := asynq.NewInspectorFromRedisClient(rdb)
	info, err := insp.GetQueueInfo(jobs.QueueDefault)
	if err != nil {
		tb.Fatalf("queue info: %v", err)
	}
	run.Archived = info.Archived
	for _, id := range ids {
		_, err := insp.GetTaskInfo(jobs.QueueDefault, id)
		if errors.Is(err, asynq.ErrTaskNotFound) {
			run.Trimmed++
		} else if err != nil {
			tb.Fatalf("task info %s: %v", id, err)
		}
	}
	if info.Pending+info.Active+info.Retry+info.Scheduled != 0 {
		tb.Errorf("queue default still holds pending=%d active=%d retry=%d scheduled=%d, want 0",
			info.Pending, info.Active, info.Retry, info.Scheduled)
	}
	return run
}

// TestPermanentFailuresAtScale sends 20,000 messages (2,000 with -short) to
// blocked chats. asynq's archive keeps at most 10,000 of them; Herald's
// failure stream must hold every one, each with its task id, queue and reason.
func TestPermanentFailuresAtScale(t *testing.T) {
	t.Parallel()
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	r := fxRunPermanentFailures(t, n)
	t.Logf("permanent failures: messages=%d enqueue=%v drain=%v XLEN=%d archived=%d dropped_by_asynq=%d recorded=%d lost=%d",
		r.Messages, r.Enqueue.Round(time.Millisecond), r.Drain.Round(time.Millisecond), r.StreamLen, r.Archived, r.Trimmed, r.Recorded, r.Lost)
	if r.StreamLen != int64(n) {
		t.Errorf("XLEN %s = %d, want %d (one entry per permanent failure)", keys.Failures(), r.StreamLen, n)
	}
	if r.Lost != 0 || r.Recorded != n {
		t.Errorf("%d of %d task ids are missing from the failure stream (recorded %d)", r.Lost, n, r.Recorded)
	}
	if r.BadFields != 0 {
		t.Errorf("%d failure entries lack task_id/queue or have a reason other than %q", r.BadFields, ledger.ReasonChatBlocked)
	}
	if r.Archived > fxAsynqArchiveCap {
		t.Errorf("asynq archived count = %d, above its cap of %d", r.Archived, fxAsynqArchiveCap)
	}
	// asynq trims the archive to the newest maxArchiveSize-1 tasks (its
	// ZRANGE 0 -maxArchiveSize removal), and deletes the trimmed tasks.
	if n < fxAsynqArchiveCap && r.Archived != n {
		t.Errorf("asynq archived count = %d, want %d (every failure archived)", r.Archived, n)
	}
	if n >= fxAsynqArchiveCap && r.Archived < fxAsynqArchiveCap-1 {
		t.Errorf("asynq archived count = %d, want %d or %d (trimmed to the cap)", r.Archived, fxAsynqArchiveCap-1, fxAsynqArchiveCap)
	}
	if n > fxAsynqArchiveCap && r.Trimmed == 0 {
		t.Errorf("no enqueued task was dropped from asynq, yet %d exceed its archive cap", n-fxAsynqArchiveCap)
	}
}

// BenchmarkPermanentFailures reports how fast a worker records permanent
// failures (2,000 per iteration).
func BenchmarkPermanentFailures(b *testing.B) {
	for b.Loop() {
		r := fxRunPermanentFailures(b, 2_000)
		b.ReportMetric(float64(r.Messages)/r.Drain.Seconds(), "failures/s")
	}
}
