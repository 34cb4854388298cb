package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// enqueueBundle is what a test needs around an Enqueuer.
type enqueueBundle struct {
	mr        *miniredis.Miniredis
	rdb       *redis.Client
	inspector *asynq.Inspector
}

// newEnqueuer starts a miniredis and an Enqueuer on it; everything is closed
// at cleanup.
func newEnqueuer(t *testing.T, cfg jobs.EnqueueConfig) (*jobs.Enqueuer, *enqueueBundle) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, cfg)
	t.Cleanup(func() {
		if err := enq.Close(); err != nil {
			t.Errorf("Enqueuer.Close: %v", err)
		}
	})
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = insp.Close() })
	return enq, &enqueueBundle{mr: mr, rdb: rdb, inspector: insp}
}

// taskKeys returns the asynq task hashes stored in any queue.
func (b *enqueueBundle) taskKeys() []string {
	var out []string
	for _, k := range b.mr.Keys() {
		if strings.HasPrefix(k, "asynq:{") && strings.Contains(k, "}:t:") {
			out = append(out, k)
		}
	}
	return out
}

func TestIdempotencyID(t *testing.T) {
	t.Parallel()
	a1, a2 := jobs.IdempotencyID("", "alert-1"), jobs.IdempotencyID("", "alert-1")
	if a1 != a2 {
		t.Fatalf("IdempotencyID is not stable: %q vs %q", a1, a2)
	}
	// Two tokens' equal keys name two messages; Herald's own (from "")
	// differ from both.
	if x, y := jobs.IdempotencyID("app", "k"), jobs.IdempotencyID("ops", "k"); x == y || x == jobs.IdempotencyID("", "k") {
		t.Fatalf("keys of two tokens share a task id: %q, %q", x, y)
	}
	seen := map[string]string{}
	for _, k := range []string{"alert-1", "alert-2", "Alert-1", "alert-1 ", "", strings.Repeat("x", 256)} {
		id := jobs.IdempotencyID("", k)
		if !strings.HasPrefix(id, "idem-") || len(id) != len("idem-")+32 {
			t.Errorf("IdempotencyID(\"\", %q) = %q, want idem- and 32 hex digits", k, id)
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("keys %q and %q share task id %q", prev, k, id)
		}
		seen[id] = k
	}
}

func TestEnqueueConfigWithDefaults(t *testing.T) {
	t.Parallel()
	got := jobs.EnqueueConfig{}.WithDefaults()
	if strings.Join(got.Queues, ",") != "critical,default,low,broadcast" || got.DefaultQueue != "default" ||
		got.MaxRetry != 25 || got.Timeout != 2*time.Minute || got.IdempotencyWindow != 24*time.Hour {
		t.Fatalf("defaults %+v", got)
	}
	set := jobs.EnqueueConfig{Queues: []string{"a"}, DefaultQueue: "a", MaxRetry: 3, Timeout: time.Second, IdempotencyWindow: time.Hour}
	if got := set.WithDefaults(); got.DefaultQueue != "a" || got.MaxRetry != 3 || got.Timeout != time.Second ||
		got.IdempotencyWindow != time.Hour || len(got.Queues) != 1 {
		t.Fatalf("WithDefaults changed set fields: %+v", got)
	}
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("stores a normalised task with the retry and timeout policy", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
		before := time.Now().UTC()
		res, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "+42", Text: "<i>hi</i>", ParseMode: "html"}})
		after := time.Now().UTC()
		if err != nil {
			t.Fatal(err)
		}
		if res.Queue != jobs.QueueDefault || res.Duplicate || res.TaskID == "" {
			t.Fatalf("result %+v", res)
		}
		info, err := b.inspector.GetTaskInfo(jobs.QueueDefault, res.TaskID)
		if err != nil {
			t.Fatalf("task not stored: %v", err)
		}
		if info.Type != jobs.TypeSendMessage || info.MaxRetry != broker.RetryCeiling || info.Timeout != 2*time.Minute || info.State != asynq.TaskStatePending {
			t.Fatalf("task info type=%q max_retry=%d timeout=%v state=%v", info.Type, info.MaxRetry, info.Timeout, info.State)
		}
		m, err := jobs.Decode(info.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if m.MaxRetry == nil || *m.MaxRetry != jobs.DefaultMaxRetry {
			t.Fatalf("payload max_retry %v, want the default budget %d", m.MaxRetry, jobs.DefaultMaxRetry)
		}
		if m.V != jobs.PayloadVersion || m.Chat != "42" || m.ParseMode != "HTML" || m.Text != "<i>hi</i>" {
			t.Fatalf("payload %+v", m)
		}
		if m.CreatedAt.Before(before.Truncate(time.Microsecond)) || m.CreatedAt.After(after) {
			t.Fatalf("created_at %v not between %v and %v", m.CreatedAt, before, after)
		}
	})

	t.Run("configured queues and policy", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{Queues: []string{"pager", "mail"}, DefaultQueue: "mail", MaxRetry: 4, Timeout: 15 * time.Second})
		res, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x"}})
		if err != nil || res.Queue != "mail" {
			t.Fatalf("Enqueue = %+v, %v; want queue mail", res, err)
		}
		res, err = enq.Enqueue(ctx, jobs.Request{Queue: "pager", Message: jobs.SendMessage{Chat: "1", Text: "x"}})
		if err != nil || res.Queue != "pager" {
			t.Fatalf("Enqueue = %+v, %v; want queue pager", res, err)
		}
		info, err := b.inspector.GetTaskInfo("pager", res.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := jobs.Decode(info.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if pm.MaxRetry == nil || *pm.MaxRetry != 4 || info.Timeout != 15*time.Second {
			t.Fatalf("payload max_retry=%v timeout=%v, want 4 and 15s", pm.MaxRetry, info.Timeout)
		}
		_, err = enq.Enqueue(ctx, jobs.Request{Queue: jobs.QueueCritical, Message: jobs.SendMessage{Chat: "1", Text: "x"}})
		if _, ok := fieldsOf(t, err)["queue"]; !ok {
			t.Fatalf("queue outside the configured list not refused: %v", err)
		}
	})

	t.Run("every invalid field is reported and nothing stored", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
		_, err := enq.Enqueue(ctx, jobs.Request{Queue: "urgent", Message: jobs.SendMessage{Chat: "abc", Text: "", ParseMode: "Markdown"}})
		got := fieldsOf(t, err)
		for _, f := range []string{"queue", "chat", "text", "parse_mode"} {
			if _, ok := got[f]; !ok {
				t.Errorf("field %q not reported in %v", f, got)
			}
		}
		if !strings.Contains(got["queue"], "urgent") {
			t.Errorf("queue message %q does not name the queue", got["queue"])
		}
		if k := b.taskKeys(); len(k) != 0 {
			t.Fatalf("invalid message stored: %v", k)
		}
	})

	t.Run("text limit from the config", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{Limits: jobs.Limits{MaxTextLen: 4}})
		if _, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "\U0001F600\U0001F600\U0001F600"}}); err == nil {
			t.Fatal("3 emoji (6 UTF-16 units) accepted under a limit of 4")
		}
		if _, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "\U0001F600\U0001F600"}}); err != nil {
			t.Fatalf("2 emoji (4 UTF-16 units) refused under a limit of 4: %v", err)
		}
		if n := len(b.taskKeys()); n != 1 {
			t.Fatalf("%d tasks stored, want 1", n)
		}
	})

	t.Run("idempotency key stores once", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{IdempotencyWindow: 3 * time.Hour})
		first, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "first", IdempotencyKey: "k1"}})
		if err != nil {
			t.Fatal(err)
		}
		if first.Duplicate || first.TaskID != jobs.IdempotencyID("", "k1") {
			t.Fatalf("first enqueue %+v", first)
		}
		second, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "second", IdempotencyKey: "k1"}})
		if err != nil {
			t.Fatal(err)
		}
		if !second.Duplicate || second.TaskID != first.TaskID || second.Queue != first.Queue {
			t.Fatalf("second enqueue %+v, want a duplicate of %+v", second, first)
		}
		if n := len(b.taskKeys()); n != 1 {
			t.Fatalf("%d tasks stored, want 1", n)
		}
		info, err := b.inspector.GetTaskInfo(jobs.QueueDefault, first.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if info.Retention != 3*time.Hour {
			t.Errorf("retention %v, want the idempotency window 3h", info.Retention)
		}
		m, err := jobs.Decode(info.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if m.Text != "first" || m.IdempotencyKey != "k1" {
			t.Fatalf("stored payload %+v, want the first message with its key", m)
		}
		other, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "first", IdempotencyKey: "k2"}})
		if err != nil || other.Duplicate || other.TaskID == first.TaskID {
			t.Fatalf("another key: %+v, %v", other, err)
		}
	})

	t.Run("wakes idle workers", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
		for i := 0; i < 3*broker.MaxWakeTokens; i++ {
			if _, err := enq.Enqueue(ctx, jobs.Request{Queue: jobs.QueueLow, Message: jobs.SendMessage{Chat: "1", Text: "x"}}); err != nil {
				t.Fatal(err)
			}
		}
		tokens, err := b.rdb.LRange(ctx, keys.WakeList(), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		// One token per enqueue wakes one idle worker; the list stays short.
		if len(tokens) == 0 || len(tokens) > broker.MaxWakeTokens || tokens[0] != jobs.QueueLow {
			t.Fatalf("wake tokens %v, want up to %d tokens naming %q", tokens, broker.MaxWakeTokens, jobs.QueueLow)
		}
	})

	t.Run("redis down is ErrUnavailable", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
		b.mr.Close()
		_, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x", IdempotencyKey: "k"}})
		if !errors.Is(err, jobs.ErrUnavailable) {
			t.Fatalf("error %v does not wrap ErrUnavailable", err)
		}
		var verr *jobs.ValidationError
		if errors.As(err, &verr) {
			t.Fatalf("an outage reported as a validation error: %v", err)
		}
	})

	t.Run("cancelled context is ErrUnavailable", func(t *testing.T) {
		t.Parallel()
		enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := enq.Enqueue(cctx, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x"}}); !errors.Is(err, jobs.ErrUnavailable) {
			t.Fatalf("error %v does not wrap ErrUnavailable", err)
		}
		if k := b.taskKeys(); len(k) != 0 {
			t.Fatalf("stored with a cancelled context: %v", k)
		}
	})
}

func TestIdempotencyKeyHoldsAcrossQueues(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	ctx := context.Background()
	msg := jobs.SendMessage{Chat: "42", Text: "once", IdempotencyKey: "deploy-7"}
	first, err := enq.Enqueue(ctx, jobs.Request{Message: msg, Queue: jobs.QueueDefault})
	if err != nil {
		t.Fatal(err)
	}
	second, err := enq.Enqueue(ctx, jobs.Request{Message: msg, Queue: jobs.QueueCritical})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Duplicate || second.TaskID != first.TaskID || second.Queue != jobs.QueueDefault {
		t.Fatalf("repeat into another queue = %+v, want a duplicate of %+v", second, first)
	}
	if n := len(b.taskKeys()); n != 1 {
		t.Fatalf("%d tasks stored, want 1", n)
	}
}
