package quota_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/test/redistest"
)

// fillBroadcast stores n broadcast messages (text of 200 bytes) in one
// batch.
func fillBroadcast(ctx context.Context, enq *jobs.Enqueuer, from, n int) error {
	items := make([]jobs.BatchItem, n)
	for i := range items {
		m, err := enq.Prepare(jobs.Request{Queue: jobs.QueueBroadcast, Message: jobs.SendMessage{
			Chat: fmt.Sprint(1000 + from + i), Text: strings.Repeat("b", 200), From: "news"}})
		if err != nil {
			return err
		}
		items[i] = jobs.BatchItem{TaskID: fmt.Sprintf("bc-test:%d", from+i), Message: m}
	}
	_, err := enq.EnqueueBatch(ctx, jobs.QueueBroadcast, items)
	return err
}

// TestReserveRefusesBulkBeforeRedisIsFull: against a real redis-server
// with maxmemory 16mb (noeviction), broadcasts fill Redis until the
// reserve refuses bulk work while Redis still takes writes; a critical
// message is then stored.
func TestReserveRefusesBulkBeforeRedisIsFull(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Args: []string{"--maxmemory", "16mb", "--maxmemory-policy", "noeviction"}})
	rdb := srv.Client(t)
	ctx := context.Background()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	res := quota.NewReserve(rdb, quota.ReserveConfig{}.WithDefaults(), slog.New(slog.DiscardHandler))
	var refused error
	stored := 0
	for stored < 200_000 {
		if err := res.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		if refused = res.Bulk(); refused != nil {
			break
		}
		if err := fillBroadcast(ctx, enq, stored, 500); err != nil {
			t.Fatalf("Redis refused a write after %d messages before the reserve did: %v", stored, err)
		}
		stored += 500
	}
	var re *quota.ReserveError
	if !errors.As(refused, &re) || re.Limit != 16<<20 || !strings.Contains(refused.Error(), quota.EnvReservePercent) {
		t.Fatalf("after %d broadcast messages: %v", stored, refused)
	}
	t.Logf("bulk refused after %d broadcast messages, at %d of %d bytes", stored, re.Used, re.Limit)
	for i := range 100 {
		if _, err := enq.Enqueue(ctx, jobs.Request{Queue: jobs.QueueCritical, Message: jobs.SendMessage{
			Chat: "-100123", Text: fmt.Sprintf("disk full on db-%d", i)}}); err != nil {
			t.Fatalf("critical message %d refused: %v", i, err)
		}
	}
}

// TestReserveCountsWhatBulkWorkWillTake: a request for n bulk messages is
// measured with its own size (each message, its text and its deferral),
// the bulk messages still pending (each yet to be deferred) and what this
// process admitted since the last sample, so that two requests between
// samples cannot both take the room left, nor a backlog grow Redis past
// the line once the workers defer it.
func TestReserveCountsWhatBulkWorkWillTake(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const limit = 64 << 20
	r := quota.NewReserve(rdb, quota.ReserveConfig{MemoryLimit: limit}.WithDefaults(), slog.New(slog.DiscardHandler))
	if err := r.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	const each = quota.MessageBytes + quota.DeferBytes + 200
	room := limit*8/10 - usedMemory(t, rdb)
	half := int(room/each/2) + 100 // two halves do not fit
	if err := r.Fits(half, 200); err != nil {
		t.Fatalf("the first %d messages: %v", half, err)
	}
	var re *quota.ReserveError
	if err := r.Fits(half, 200); !errors.As(err, &re) || re.Asked != int64(half)*each {
		t.Fatalf("the second %d messages before a sample: %v, want refused asking %d bytes", half, err, int64(half)*each)
	}
	if err := r.Bulk(); err != nil {
		t.Fatalf("one message after the first half: %v", err)
	}
	// A backlog of pending broadcast messages counts its deferral.
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	const backlog = 5000
	for i := 0; i < backlog; i += 500 {
		if err := fillBroadcast(ctx, enq, i, 500); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	err := r.Fits(1<<30/each, 200)
	if !errors.As(err, &re) {
		t.Fatalf("a gigabyte of messages: %v", err)
	}
	if used := usedMemory(t, rdb); re.Used < used+backlog*quota.DeferBytes-(1<<20) || re.Used > used+backlog*quota.DeferBytes+(1<<20) {
		t.Fatalf("expected use %d with used_memory %d and %d pending broadcast messages; want about %d", re.Used, used, backlog, used+backlog*quota.DeferBytes)
	}
	if !strings.Contains(err.Error(), "this request would add") {
		t.Fatalf("the refusal does not say what the request would add: %v", err)
	}
}

// TestReserveAdmitsConcurrentRequestsWithinTheRoom: requests checked at
// the same moment see each other, so together they never take more than
// the room under the line.
func TestReserveAdmitsConcurrentRequestsWithinTheRoom(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	const limit = 64 << 20
	r := quota.NewReserve(rdb, quota.ReserveConfig{MemoryLimit: limit}.WithDefaults(), slog.New(slog.DiscardHandler))
	if err := r.Sample(context.Background()); err != nil {
		t.Fatal(err)
	}
	const each = quota.MessageBytes + quota.DeferBytes
	room := limit*8/10 - usedMemory(t, rdb)
	n := int(room / each / 10) // ten such requests fit, not eleven
	var wg sync.WaitGroup
	var admitted atomic.Int32
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Fits(n, 0) == nil {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := admitted.Load(); got != 10 {
		t.Fatalf("%d of 64 concurrent requests of %d messages admitted, want 10 (room %d bytes)", got, n, room)
	}
}

// TestReserveUsesTheSettingWithoutMaxmemory: a Redis without maxmemory is
// measured against HERALD_REDIS_MEMORY_LIMIT; with neither, nothing is
// refused.
func TestReserveUsesTheSettingWithoutMaxmemory(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		limit   int64
		refused bool
	}{{0, false}, {1 << 20, true}, {1 << 40, false}} {
		r := quota.NewReserve(rdb, quota.ReserveConfig{MemoryLimit: tc.limit}.WithDefaults(), slog.New(slog.DiscardHandler))
		if err := r.Bulk(); err != nil {
			t.Fatalf("refused before any sample: %v", err)
		}
		if err := r.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r.Bulk() != nil; got != tc.refused {
			t.Errorf("limit %d: refused %v, want %v", tc.limit, got, tc.refused)
		}
	}
}

// BenchmarkQueuedMessageBytes measures the Redis memory one queued message
// costs (used_memory before and after storing b.N messages of a 100-byte
// text into the default queue, one by one as POST /v1/messages does).
func BenchmarkQueuedMessageBytes(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	ctx := context.Background()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	before := usedMemory(b, rdb)
	text := strings.Repeat("m", 100)
	b.ResetTimer()
	for i := range b.N {
		if _, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: fmt.Sprint(-1001000000000 - i), Text: text, From: "cron"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(usedMemory(b, rdb)-before)/float64(b.N), "bytes/msg")
}

// BenchmarkBroadcastMessageBytes is the same for broadcast messages
// (text of 200 bytes), stored in batches of 500 as a broadcast stores them.
func BenchmarkBroadcastMessageBytes(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	ctx := context.Background()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	before := usedMemory(b, rdb)
	b.ResetTimer()
	for i := 0; i < b.N; i += 500 {
		if err := fillBroadcast(ctx, enq, i, min(500, b.N-i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(usedMemory(b, rdb)-before)/float64(b.N), "bytes/msg")
}

func usedMemory(tb testing.TB, rdb *redis.Client) int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			var n int64
			_, _ = fmt.Sscan(v, &n)
			return n
		}
	}
	tb.Fatal("no used_memory in INFO memory")
	return 0
}
