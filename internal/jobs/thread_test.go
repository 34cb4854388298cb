package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// storedThread enqueues req and returns the thread of the stored payload.
func storedThread(t *testing.T, enq *jobs.Enqueuer, b *enqueueBundle, req jobs.Request) *jobs.Thread {
	t.Helper()
	res, err := enq.Enqueue(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	info, err := b.inspector.GetTaskInfo(res.Queue, res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := jobs.Decode(info.Payload)
	if err != nil {
		t.Fatalf("the stored payload does not decode: %v", err)
	}
	return m.Thread
}

// TestEnqueueNamespacesThreadKeys: the Enqueuer stores the thread key after
// the request's namespace, marks the namespaced thread open, and leaves
// the caller's Thread alone; without a namespace the key stays as it is.
func TestEnqueueNamespacesThreadKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	open := &jobs.Thread{Key: "disk", Mode: jobs.ThreadOpen}
	space := jobs.MessageThreadSpace("ops")
	got := storedThread(t, enq, b, jobs.Request{ThreadSpace: space, Message: jobs.SendMessage{Chat: "1", Text: "x", Thread: open}})
	if got == nil || got.Key != "msg/ops/disk" || got.Mode != jobs.ThreadOpen {
		t.Fatalf("stored thread %+v, want msg/ops/disk opened", got)
	}
	if open.Key != "disk" {
		t.Errorf("the caller's thread key became %q", open.Key)
	}
	if v, _ := b.rdb.Get(ctx, keys.Bot("").Thread("1", "msg/ops/disk")).Result(); v != "pending" {
		t.Errorf("namespaced thread record %q, want pending", v)
	}
	if n := b.rdb.Exists(ctx, keys.Bot("").Thread("1", "disk")).Val(); n != 0 {
		t.Error("the key as written was marked open too")
	}
	got = storedThread(t, enq, b, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x",
		Thread: &jobs.Thread{Key: "alert/disk/db", Mode: jobs.ThreadReply}}})
	if got == nil || got.Key != "alert/disk/db" {
		t.Fatalf("thread without a namespace stored as %+v", got)
	}

	// A coalescible message keeps its namespaced key in its digest item,
	// for when it is sent alone.
	if _, err := enq.Enqueue(ctx, jobs.Request{ThreadSpace: space, Coalesce: true,
		Message: jobs.SendMessage{Chat: "2", Text: "x", Thread: &jobs.Thread{Key: "disk", Mode: jobs.ThreadReply}}}); err != nil {
		t.Fatal(err)
	}
	tasks, err := b.inspector.ListAggregatingTasks(jobs.QueueDefault, "2")
	if err != nil || len(tasks) != 1 {
		t.Fatalf("%d grouped tasks (%v), want 1", len(tasks), err)
	}
	it, err := jobs.DecodeItem(tasks[0].Payload)
	if err != nil || it.Message.Thread == nil || it.Message.Thread.Key != "msg/ops/disk" {
		t.Fatalf("digest item %+v (%v), want thread msg/ops/disk", it.Message.Thread, err)
	}
}

// TestThreadKeyLimitIsTheSenders: MaxThreadKey bounds the key as the
// sender wrote it (the error names thread.key); the stored key, namespace
// included, may be longer and still decodes, and enqueueing that payload
// again (a digest sending its item alone) keeps it.
func TestThreadKeyLimitIsTheSenders(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	space := jobs.MessageThreadSpace(strings.Repeat("n", 32))
	longest := strings.Repeat("k", jobs.MaxThreadKey)
	got := storedThread(t, enq, b, jobs.Request{ThreadSpace: space,
		Message: jobs.SendMessage{Chat: "1", Text: "x", Thread: &jobs.Thread{Key: longest, Mode: jobs.ThreadOpen}}})
	if got == nil || got.Key != space+longest {
		t.Fatalf("stored thread %+v", got)
	}
	again := storedThread(t, enq, b, jobs.Request{Message: jobs.SendMessage{Chat: "1", Text: "x", Thread: got}})
	if again == nil || again.Key != space+longest {
		t.Fatalf("enqueued again as %+v", again)
	}

	_, err := enq.Enqueue(context.Background(), jobs.Request{ThreadSpace: space,
		Message: jobs.SendMessage{Chat: "1", Text: "x", Thread: &jobs.Thread{Key: longest + "k", Mode: jobs.ThreadOpen}}})
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != "thread.key" ||
		!strings.Contains(verr.Fields[0].Message, "is 257 bytes long; the limit is 256") {
		t.Fatalf("a 257-byte key: %v, want one thread.key error with the limit 256", err)
	}
}

// TestEnqueueRefusesABadThreadSpace: a namespace that does not end in "/"
// or is too long is a caller's bug: refused, not a validation error.
func TestEnqueueRefusesABadThreadSpace(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	for _, space := range []string{"msg/ops", strings.Repeat("s", jobs.MaxThreadSpace) + "/"} {
		_, err := enq.Enqueue(context.Background(), jobs.Request{ThreadSpace: space,
			Message: jobs.SendMessage{Chat: "1", Text: "x", Thread: &jobs.Thread{Key: "k", Mode: jobs.ThreadOpen}}})
		var verr *jobs.ValidationError
		if err == nil || errors.As(err, &verr) || errors.Is(err, jobs.ErrUnavailable) {
			t.Errorf("namespace %q: %v, want a plain error", space, err)
		}
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored", n)
	}
}

// TestMessageThreadSpace: a token's namespace holds its name when the name
// is plain; any other name becomes a digest that no plain name spells. No
// namespace is another's prefix, nor an alert's or the CLI's.
func TestMessageThreadSpace(t *testing.T) {
	t.Parallel()
	if s := jobs.MessageThreadSpace("ops-1_a"); s != "msg/ops-1_a/" {
		t.Fatalf("namespace %q", s)
	}
	names := []string{"ops", "op", "ops/x", "ops/", "", "Ops", "local", "cli", "alert",
		strings.Repeat("a", 59), strings.Repeat("a", 60), "é", "=x", "ops x"}
	spaces := map[string]string{}
	for _, n := range names {
		s := jobs.MessageThreadSpace(n)
		if len(s) > jobs.MaxThreadSpace || !strings.HasPrefix(s, "msg/") || strings.Count(s, "/") != 2 || !strings.HasSuffix(s, "/") {
			t.Errorf("namespace of %q = %q", n, s)
		}
		for other, o := range spaces {
			if strings.HasPrefix(s, o) || strings.HasPrefix(o, s) {
				t.Errorf("namespaces of %q (%q) and %q (%q) overlap", n, s, other, o)
			}
		}
		for _, fixed := range []string{jobs.AlertThreadSpace, jobs.CLIThreadSpace, "press/"} {
			if strings.HasPrefix(s, fixed) {
				t.Errorf("namespace of %q = %q starts with %q", n, s, fixed)
			}
		}
		spaces[n] = s
	}
	if s := jobs.MessageThreadSpace(strings.Repeat("a", 60)); !strings.HasPrefix(s, "msg/=") {
		t.Errorf("a 60-byte name is kept: %q", s)
	}
}
