package worker

import (
	"context"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/test/redistest"
)

// TestSendRecordRetention: a record with parts still to send keeps
// SentRetention (its task may be retried, or run again from the web UI,
// that long); once every part is sent it becomes the ledger's record, with
// every part's message id, for the ledger's retention.
func TestSendRecordRetention(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	h := &handler{rdb: rdb, sentRetention: 7 * 24 * time.Hour, ledger: ledger.NewStore(rdb, ledger.Config{Retention: 3 * time.Hour})}
	// A bot other than the default: its records carry its own hash tag.
	b := &bot{name: "pages", keys: keys.Bot("pages")}
	d := &delivery{msg: jobs.SendMessage{Chat: "@news", From: "app"}, chat: "-1001", texts: []string{"a", "b"}, prog: progress{done: 1, last: 5, ids: []int{5}}}
	r := &run{Task: broker.Task{ID: "m1", Queue: "default"}, bot: b, d: d}
	if err := h.saveProgress(ctx, r, d); err != nil {
		t.Fatal(err)
	}
	k := keys.Bot("pages").Sent("m1")
	if ttl := rdb.TTL(ctx, k).Val(); ttl < 7*24*time.Hour-time.Minute {
		t.Fatalf("record with parts to send lives %v, want the sent retention", ttl)
	}
	if p := parseProgress(rdb.Get(ctx, k).Val()); p.done != 1 || p.last != 5 || len(p.ids) != 1 || p.settled != nil {
		t.Fatalf("progress read back = %+v", p)
	}
	d.prog = progress{done: 2, last: 6, ids: []int{5, 6}}
	if err := h.saveProgress(ctx, r, d); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, k).Val(); ttl <= 2*time.Hour || ttl > 3*time.Hour {
		t.Fatalf("finished record lives %v, want the ledger's 3h", ttl)
	}
	rec, ok, err := ledger.NewStore(rdb, ledger.Config{}).Get(ctx, "pages", "m1")
	if err != nil || !ok {
		t.Fatalf("ledger record: %v, %v", ok, err)
	}
	if rec.State != ledger.StateSent || len(rec.MessageIDs) != 2 || rec.MessageIDs[1] != 6 || rec.Chat != "-1001" ||
		rec.Username != "@news" || rec.From != "app" || rec.Queue != "default" || rec.Settled == 0 {
		t.Fatalf("ledger record = %+v", rec)
	}
	if p := parseProgress(rdb.Get(ctx, k).Val()); p.settled == nil || p.done != 2 {
		t.Fatalf("a settled record reads as %+v; want settled", p)
	}
	n := rdb.MemoryUsage(ctx, k).Val()
	if n > 300 {
		t.Fatalf("a sent message's record takes %d bytes of Redis memory; the budget is 300", n)
	}
	t.Logf("a sent message's record (2 parts, a bot of its own, @username): %d bytes (MEMORY USAGE), value %d bytes", n, len(rdb.Get(ctx, k).Val()))
	// The common case: the default bot, a task id as asynq makes them, one
	// part to a supergroup.
	d = &delivery{msg: jobs.SendMessage{Chat: "-1001234567890", From: "api", CreatedAt: time.Now()}, chat: "-1001234567890", texts: []string{"a"},
		prog: progress{done: 1, last: 4711, ids: []int{4711}}}
	r = &run{Task: broker.Task{ID: "0c6194bf-5d1a-4a7e-9d0e-3f1f2b8c9a7d", Queue: "default"}, bot: &bot{name: "default", keys: keys.Bot("")}, d: d}
	if err := h.saveProgress(ctx, r, d); err != nil {
		t.Fatal(err)
	}
	k = keys.Bot("").Sent(r.ID)
	if n = rdb.MemoryUsage(ctx, k).Val(); n > 300 {
		t.Fatalf("a sent message's record takes %d bytes of Redis memory; the budget is 300", n)
	}
	t.Logf("a sent message's record (1 part, the default bot, a uuid task id): %d bytes (MEMORY USAGE), value %d bytes", n, len(rdb.Get(ctx, k).Val()))
}
