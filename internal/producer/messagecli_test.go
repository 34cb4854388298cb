package producer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
)

func TestMessageCommand(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	ctx := context.Background()
	msgs := ledger.NewMessages(ledger.NewStore(b.rdb, ledger.Config{}), b.inspector, jobs.DefaultQueues(), nil)
	run := func(cmd string, args ...string) (int, ledger.Status, string) {
		var out, errOut bytes.Buffer
		code := producer.MessageCommand(ctx, cmd, msgs, args, &out, &errOut)
		var st ledger.Status
		_ = json.Unmarshal(out.Bytes(), &st)
		return code, st, errOut.String()
	}
	if code, _, msg := run("status", "nope"); code != producer.ExitNoMessage || msg == "" {
		t.Fatalf("status of an unknown id: %d %q", code, msg)
	}
	if code, _, _ := run("status"); code != producer.ExitUsage {
		t.Fatalf("status without an id: %d", code)
	}
	res, err := b.enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "5", Text: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if code, st, _ := run("status", res.TaskID); code != 0 || st.State != ledger.StateQueued {
		t.Fatalf("status: %d %+v", code, st)
	}
	if code, st, _ := run("cancel", res.TaskID); code != 0 || st.State != ledger.StateCancelled {
		t.Fatalf("cancel: %d %+v", code, st)
	}
	if code, st, msg := run("cancel", res.TaskID); code != producer.ExitTooLate || st.State != ledger.StateCancelled || msg == "" {
		t.Fatalf("second cancel: %d %+v %q", code, st, msg)
	}
	if code, _, _ := run("retry", res.TaskID); code != producer.ExitTooLate {
		t.Fatalf("retry of a cancelled message: %d", code)
	}
}
