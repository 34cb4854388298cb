package worker

import (
	"context"
	"testing"
	"time"

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
	h := &Handler{rdb: rdb, sentRetention: 7 * 24 * time.Hour}
	if err := h.saveProgress(ctx, "unfinished", progress{done: 1}, 5, false); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, keys.Sent("unfinished")).Val(); ttl < 7*24*time.Hour-time.Minute {
		t.Fatalf("record with parts to send lives %v, want the sent retention", ttl)
	}
	if err := h.saveProgress(ctx, "finished", progress{done: 2}, 6, true); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, keys.Sent("finished")).Val(); ttl <= 0 || ttl > FinishedRecordTTL {
		t.Fatalf("finished record lives %v, want at most %v", ttl, FinishedRecordTTL)
	}
}
