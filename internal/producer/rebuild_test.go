package producer_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
)

// TestRetryRebuildsAnEvictedTask: a failed message whose task left asynq's
// archive is retried from the payload the worker kept beside its record;
// without that copy the 409 says it cannot be rebuilt.
func TestRetryRebuildsAnEvictedTask(t *testing.T) {
	t.Parallel()
	h, b := newLedgerAPIWithMessages(t)
	lg := ledger.NewStore(b.rdb, ledger.Config{})
	ctx := t.Context()
	payload, err := jobs.SendMessage{Chat: "5", Text: "disk full", From: "api", CreatedAt: time.Now()}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"kept", "lost"} {
		rec := ledger.Record{State: ledger.StateFailed, Chat: "5", Queue: "default", From: "api", Reason: "chat_blocked", Settled: time.Now().UnixMilli()}
		if err := lg.Put(ctx, "", id, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.rdb.Set(ctx, keys.Bot("").FailedTask("kept"), payload, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if st := status(t, do(h, request{path: "/v1/messages/kept/retry"}), http.StatusAccepted); st.State != ledger.StateQueued {
		t.Fatalf("retried: %+v", st)
	}
	info, err := b.inspector.GetTaskInfo("default", "kept")
	if err != nil || string(info.Payload) != string(payload) {
		t.Fatalf("the rebuilt task: %+v %v", info, err)
	}
	rec := do(h, request{path: "/v1/messages/lost/retry"})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "cannot be rebuilt") {
		t.Fatalf("without a copy: %d %s", rec.Code, rec.Body)
	}
}
