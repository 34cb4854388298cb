package scenarios

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// digestEnv gives the workers one-second windows, so a scenario flushes in
// seconds, and reclaims an abandoned aggregation after two.
var digestEnv = []string{
	"HERALD_DIGEST_GRACE_PERIOD=1s",
	"HERALD_DIGEST_MAX_DELAY=2s",
	"HERALD_DIGEST_RECLAIM_AFTER=2s",
}

func start(t *testing.T, workers int) *fleettest.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("process scenario skipped in -short mode")
	}
	return fleettest.Start(t, fleettest.Options{Workers: workers, WorkerEnv: digestEnv, Timeout: 2 * time.Minute})
}

// coalescible returns n coalescible messages round-robin over chats, with
// unique texts.
func coalescible(label string, n int, chats ...string) []fleet.Message {
	ms := make([]fleet.Message, n)
	for i := range ms {
		c := chats[i%len(chats)]
		ms[i] = fleet.Message{Chat: c, Text: fmt.Sprintf("%s %s #%03d", label, c, i), Coalesce: true}
	}
	return ms
}

// waitItems waits until every message shows in a delivered message.
func waitItems(t *testing.T, s *fleettest.Stack, ms []fleet.Message) {
	t.Helper()
	for {
		have := len(s.Fake.Messages())
		o := fleet.TallyItems(ms, s.Fake.Messages(), s.Fake.Stats(), time.Time{})
		if o.Lost == 0 {
			return
		}
		if err := s.Fake.Wait(s.Ctx, have+1); err != nil {
			t.Fatalf("%d of %d items never delivered: %v", o.Lost, len(ms), err)
		}
	}
}

// waitQuiet waits until no task waits, runs or is grouped and no
// aggregation set is left. asynq sends no notification, so this polls.
func waitQuiet(t *testing.T, s *fleettest.Stack, rdb *redis.Client) {
	t.Helper()
	for {
		c := s.Counts()
		busy := c.Active + c.Pending + c.Scheduled + c.Retry
		for _, q := range fleettest.Queues {
			if info, err := s.Insp.GetQueueInfo(q); err == nil {
				busy += info.Aggregating
			}
			busy += int(rdb.ZCard(s.Ctx, broker.AggregationSetsKey(q)).Val())
		}
		if busy == 0 {
			return
		}
		select {
		case <-s.Ctx.Done():
			t.Fatalf("never quiet: %s", c)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestTwoWorkersDeliverEachItemOnce sends coalescible bursts to five chats
// through the producer API, with two worker processes aggregating and
// handling digests concurrently: every item arrives exactly once, in far
// fewer messages than items.
func TestTwoWorkersDeliverEachItemOnce(t *testing.T) {
	t.Parallel()
	s := start(t, 2)
	rdb := s.Redis.Client(t)
	ms := coalescible("two", 150, "5101", "5102", "5103", "5104", "-1005105")
	if _, err := s.Fleet.PostAll(s.Ctx, ms, 16); err != nil {
		t.Fatal(err)
	}
	waitItems(t, s, ms)
	waitQuiet(t, s, rdb)
	o := fleet.TallyItems(ms, s.Fake.Messages(), s.Fake.Stats(), time.Time{})
	if o.Lost != 0 || o.Duplicates != 0 || o.TooMany != 0 {
		t.Fatalf("lost=%d duplicates=%d 429s=%d, want 0/0/0", o.Lost, o.Duplicates, o.TooMany)
	}
	if o.Messages*5 > len(ms) {
		t.Fatalf("%d items took %d messages, want at least 5x fewer", len(ms), o.Messages)
	}
	if c := s.Counts(); c.Archived != 0 {
		t.Fatalf("archived tasks: %s", c)
	}
	t.Logf("%d items in %d messages", len(ms), o.Messages)
}

// TestAbandonedAggregationWithTwoWorkers leaves behind what a worker
// SIGKILLed between storing a digest and deleting its aggregation set
// leaves: the digest and the set. Two worker processes then deliver the
// digest and, from the reclaimed set, a second one; every item arrives
// exactly once.
func TestAbandonedAggregationWithTwoWorkers(t *testing.T) {
	t.Parallel()
	s := start(t, 0)
	rdb := s.Redis.Client(t)
	ms := coalescible("kept", 40, "5201", "5202")
	if _, err := s.Fleet.PostAll(s.Ctx, ms, 8); err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"5201", "5202"} {
		tasks := abandon(t, s, rdb, "default", group)
		if group == "5201" {
			// This one died after storing its digest.
			client := asynq.NewClientFromRedisClient(rdb)
			if _, err := client.EnqueueContext(s.Ctx, digest.Aggregate(group, tasks), asynq.Queue("default")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := s.Fleet.StartWorker(s.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitItems(t, s, ms)
	waitQuiet(t, s, rdb)
	o := fleet.TallyItems(ms, s.Fake.Messages(), s.Fake.Stats(), time.Time{})
	if o.Lost != 0 || o.Duplicates != 0 {
		t.Fatalf("lost=%d duplicates=%d, want 0/0", o.Lost, o.Duplicates)
	}
}

// TestWorkerSIGKILLLosesNoItem kills the only worker while digests are
// being aggregated, handled and sent, then starts another: no item is lost.
// A digest message Telegram accepted just before the kill, and that the
// worker had no time to record, is sent again, as for any message.
func TestWorkerSIGKILLLosesNoItem(t *testing.T) {
	t.Parallel()
	s := start(t, 1)
	rdb := s.Redis.Client(t)
	ms := coalescible("kill", 120, "5301", "5302", "5303", "5304", "5305", "5306")
	if _, err := s.Fleet.PostAll(s.Ctx, ms, 16); err != nil {
		t.Fatal(err)
	}
	if err := s.Fake.Wait(s.Ctx, 1); err != nil {
		t.Fatal(err)
	}
	w := s.Fleet.Workers[0]
	if err := w.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	if _, err := s.Fleet.StartWorker(s.Ctx); err != nil {
		t.Fatal(err)
	}
	waitItems(t, s, ms)
	waitQuiet(t, s, rdb)
	o := fleet.TallyItems(ms, s.Fake.Messages(), s.Fake.Stats(), time.Time{})
	if o.Lost != 0 {
		t.Fatalf("%d items lost", o.Lost)
	}
	// A message sent but not yet recorded when the worker died goes out
	// again, whole; an item must never show in two different messages.
	texts := map[string]map[string]bool{}
	for _, d := range s.Fake.Messages() {
		plain, err := markup.Plain(d.Text, markup.Mode(d.ParseMode))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if strings.Contains(plain, m.Text) {
				if texts[m.Text] == nil {
					texts[m.Text] = map[string]bool{}
				}
				texts[m.Text][d.Text] = true
			}
		}
	}
	for item, in := range texts {
		if len(in) != 1 {
			t.Errorf("item %q went out in %d different messages", item, len(in))
		}
	}
	t.Logf("after a SIGKILL: %d items in %d messages, %d items repeated by resent messages", len(ms), o.Messages, o.Duplicates)
}

// abandon moves a group's items into an aggregation set as asynq's
// aggregator does before storing the digest, and returns the tasks.
func abandon(t *testing.T, s *fleettest.Stack, rdb *redis.Client, queue, group string) []*asynq.Task {
	t.Helper()
	ctx := context.Background()
	infos, err := s.Insp.ListAggregatingTasks(queue, group, asynq.PageSize(1000))
	if err != nil || len(infos) == 0 {
		t.Fatalf("group %s: %d tasks (%v)", group, len(infos), err)
	}
	members := rdb.ZRangeWithScores(ctx, broker.GroupKey(queue, group), 0, -1).Val()
	now := rdb.Time(ctx).Val()
	set := broker.AggregationSetKey(queue, group, uuid.NewString())
	pipe := rdb.TxPipeline()
	pipe.ZAdd(ctx, set, members...)
	pipe.Del(ctx, broker.GroupKey(queue, group))
	pipe.SRem(ctx, broker.GroupsKey(queue), group)
	pipe.ZAdd(ctx, broker.AggregationSetsKey(queue), redis.Z{Score: float64(now.Add(broker.AggregationTimeout).Unix()), Member: set})
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	tasks := make([]*asynq.Task, len(infos))
	for i, ti := range infos {
		tasks[i] = asynq.NewTask(ti.Type, ti.Payload)
	}
	return tasks
}
