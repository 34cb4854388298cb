package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
	"github.com/herald-dev/herald/test/redistest"
)

const scale = 10

type bundle struct {
	fleet *fleet.Fleet
	fake  *telegramfake.Server
	redis *redistest.Server
	insp  *asynq.Inspector
	ctx   context.Context
}

// setup starts redis-server, the fake at 10x Telegram time, the producer
// and n workers (test/fleet/fleettest).
func setup(t *testing.T, workers int) *bundle {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: workers, Fake: telegramfake.Config{TimeScale: scale}})
	return &bundle{fleet: s.Fleet, fake: s.Fake, redis: s.Redis, insp: s.Insp, ctx: s.Ctx}
}

// assertClean checks that nothing failed or was archived and waits until no
// task is left active, pending or retrying: the last tasks may still be
// between their send and their ack when the fake has seen every message.
// asynq sends no notification, so this polls.
func (b *bundle) assertClean(t *testing.T) {
	t.Helper()
	for {
		busy := ""
		for _, q := range []string{"critical", "default", "low"} {
			info, err := b.insp.GetQueueInfo(q)
			if err != nil {
				continue // a queue never used does not exist
			}
			if info.Archived != 0 || info.Failed != 0 {
				t.Fatalf("queue %s: archived=%d failed=%d, want 0", q, info.Archived, info.Failed)
			}
			if info.Active != 0 || info.Pending != 0 || info.Retry != 0 {
				busy = fmt.Sprintf("queue %s: active=%d pending=%d retry=%d", q, info.Active, info.Pending, info.Retry)
			}
		}
		if busy == "" {
			return
		}
		select {
		case <-b.ctx.Done():
			t.Fatalf("%s at the deadline, want all 0", busy)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *bundle) deliver(t *testing.T, ms []fleet.Message, during func(delivered int)) fleet.Outcome {
	t.Helper()
	start, err := b.fleet.PostAll(b.ctx, ms, 16)
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(0)
	}
	if err := b.fake.Wait(b.ctx, len(ms)); err != nil {
		t.Fatalf("waiting for %d deliveries: %v (got %d)", len(ms), err, len(b.fake.Messages()))
	}
	return fleet.Tally(ms, b.fake.Messages(), b.fake.Stats(), start)
}

func TestBurstS1ThreeWorkers(t *testing.T) {
	t.Parallel()
	b := setup(t, 3)
	ms := fleet.S1(1)
	o := b.deliver(t, ms, nil)
	if o.TooMany != 0 || o.Lost != 0 || o.Duplicates != 0 {
		t.Fatalf("S1 with 3 workers: 429s=%d lost=%d duplicates=%d, want 0/0/0", o.TooMany, o.Lost, o.Duplicates)
	}
	b.assertClean(t)
	t.Logf("S1: drain %v, theoretical minimum %v", o.Drain, fleet.MinDrain(ms, b.fleet.Limits))
}

func TestWorkersJoinAndLeaveMidBurst(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	ms := fleet.S1(2)
	start, err := b.fleet.PostAll(b.ctx, ms, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, 40); err != nil {
		t.Fatal(err)
	}
	var joined []*fleet.Proc
	for i := 0; i < 2; i++ {
		w, err := b.fleet.StartWorker(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, w)
	}
	if err := b.fake.Wait(b.ctx, 120); err != nil {
		t.Fatal(err)
	}
	// The first worker leaves gracefully while the new ones carry on.
	if err := b.fleet.StopWorker(b.ctx, b.fleet.Workers[0]); err != nil {
		t.Fatalf("worker did not exit cleanly on SIGTERM: %v", err)
	}
	if err := b.fake.Wait(b.ctx, len(ms)); err != nil {
		t.Fatal(err)
	}
	o := fleet.Tally(ms, b.fake.Messages(), b.fake.Stats(), start)
	if o.TooMany != 0 || o.Lost != 0 || o.Duplicates != 0 {
		t.Fatalf("join/leave: 429s=%d lost=%d duplicates=%d, want 0/0/0", o.TooMany, o.Lost, o.Duplicates)
	}
	b.assertClean(t)
	_ = joined
}

func TestSIGTERMWithTasksInFlightLosesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	var ms []fleet.Message
	for i := 0; i < 150; i++ {
		ms = append(ms, fleet.Message{Chat: fmt.Sprint(3000 + i%10), Text: fmt.Sprintf("term #%d", i)})
	}
	start, err := b.fleet.PostAll(b.ctx, ms, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, 20); err != nil {
		t.Fatal(err)
	}
	for _, w := range append([]*fleet.Proc{}, b.fleet.Workers...) {
		if err := b.fleet.StopWorker(b.ctx, w); err != nil {
			t.Fatalf("worker exit after SIGTERM: %v", err)
		}
	}
	if _, err := b.fleet.StartWorker(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, len(ms)); err != nil {
		t.Fatal(err)
	}
	o := fleet.Tally(ms, b.fake.Messages(), b.fake.Stats(), start)
	if o.Lost != 0 || o.Duplicates != 0 || o.TooMany != 0 {
		t.Fatalf("after SIGTERM: lost=%d duplicates=%d 429s=%d, want 0/0/0", o.Lost, o.Duplicates, o.TooMany)
	}
	b.assertClean(t)
}

func TestHotChatDoesNotDelayQuietChat(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	var hot []fleet.Message
	for i := 0; i < 300; i++ {
		hot = append(hot, fleet.Message{Chat: "4001", Text: fmt.Sprintf("hot #%d", i)})
	}
	if _, err := b.fleet.PostAll(b.ctx, hot, 16); err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, 3); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, _, err := b.fleet.Post(b.ctx, map[string]any{"chat": "4002", "text": "quiet"}); err != nil {
		t.Fatal(err)
	}
	for {
		for _, m := range b.fake.Messages() {
			if m.Text == "quiet" {
				// The quiet chat's own limit at this scale is 100ms; allow a
				// generous margin for scheduling on a busy machine.
				if d := m.At.Sub(sent); d > 100*time.Millisecond+400*time.Millisecond {
					t.Fatalf("quiet chat's message took %v behind a hot chat", d)
				}
				if n := b.fake.Stats().TooMany; n != 0 {
					t.Fatalf("%d 429s", n)
				}
				return
			}
		}
		if err := b.fake.Wait(b.ctx, len(b.fake.Messages())+1); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGlobalFloodPausesEverythingAndLosesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	var ms []fleet.Message
	for i := 0; i < 120; i++ {
		ms = append(ms, fleet.Message{Chat: fmt.Sprint(5000 + i%30), Text: fmt.Sprintf("flood #%d", i)})
	}
	start, err := b.fleet.PostAll(b.ctx, ms, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, 10); err != nil {
		t.Fatal(err)
	}
	b.fake.Force429(3 * time.Second) // Telegram time: 300ms here
	if err := b.fake.Wait(b.ctx, len(ms)); err != nil {
		t.Fatal(err)
	}
	o := fleet.Tally(ms, b.fake.Messages(), b.fake.Stats(), start)
	if o.Lost != 0 || o.Duplicates != 0 {
		t.Fatalf("lost=%d duplicates=%d, want 0/0", o.Lost, o.Duplicates)
	}
	// Once a few chats were refused the whole bot pauses: the refusals stay
	// far below one per queued message.
	if o.TooMany > 40 {
		t.Fatalf("%d 429s during a global flood; the bot-wide pause did not hold", o.TooMany)
	}
	b.assertClean(t)
	t.Logf("global flood: %d 429s for %d messages", o.TooMany, len(ms))
}

// As `docker compose up --scale worker=1` does to a fleet of three in the
// middle of a burst: two workers get SIGTERM; the last one finishes the job.
func TestScaleDownMidBurst(t *testing.T) {
	t.Parallel()
	b := setup(t, 3)
	ms := fleet.S1(3)
	start, err := b.fleet.PostAll(b.ctx, ms, 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fake.Wait(b.ctx, 60); err != nil {
		t.Fatal(err)
	}
	for _, w := range b.fleet.Workers[1:] {
		if err := b.fleet.StopWorker(b.ctx, w); err != nil {
			t.Fatalf("worker exit after SIGTERM: %v", err)
		}
	}
	if err := b.fake.Wait(b.ctx, len(ms)); err != nil {
		t.Fatal(err)
	}
	o := fleet.Tally(ms, b.fake.Messages(), b.fake.Stats(), start)
	if o.TooMany != 0 || o.Lost != 0 || o.Duplicates != 0 {
		t.Fatalf("scale down 3 -> 1: 429s=%d lost=%d duplicates=%d, want 0/0/0", o.TooMany, o.Lost, o.Duplicates)
	}
	b.assertClean(t)
}
