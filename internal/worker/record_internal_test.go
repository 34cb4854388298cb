package worker

import (
	"context"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// TestUnfinishedRecordKeepsSentRetention: a record with parts still to
// send keeps SentRetention (its task may be retried, or run again from the
// web UI, that long); a finished one FinishedRecordTTL.
func TestUnfinishedRecordKeepsSentRetention(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	h := &handler{rdb: rdb, sentRetention: 7 * 24 * time.Hour}
	// A bot other than the default: its records carry its own hash tag.
	b := &bot{name: "pages", keys: keys.Bot("pages")}
	task := func(id string) *run { return &run{Task: broker.Task{ID: id}, bot: b} }
	if err := h.saveProgress(ctx, task("unfinished"), progress{done: 1}, 5, false); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, keys.Bot("pages").Sent("unfinished")).Val(); ttl < 7*24*time.Hour-time.Minute {
		t.Fatalf("record with parts to send lives %v, want the sent retention", ttl)
	}
	if err := h.saveProgress(ctx, task("finished"), progress{done: 2}, 6, true); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, keys.Bot("pages").Sent("finished")).Val(); ttl <= 0 || ttl > FinishedRecordTTL {
		t.Fatalf("finished record lives %v, want at most %v", ttl, FinishedRecordTTL)
	}
}
