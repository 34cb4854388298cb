package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

func TestEnqueueCoalescedGoesIntoTheChatsGroup(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	ctx := context.Background()
	tests := []struct {
		name  string
		msg   jobs.SendMessage
		group string
	}{
		{"chat", jobs.SendMessage{Chat: "42", Text: "<b>disk full</b> on db-1\nonly 2% left", ParseMode: "html"}, "42"},
		{"forum topic", jobs.SendMessage{Chat: "-100123", Text: "topic", MessageThreadID: 7}, "-100123:7"},
		{"username in any case", jobs.SendMessage{Chat: "@Herald_Channel", Text: "x"}, "@herald_channel"},
	}
	for _, tc := range tests {
		res, err := enq.Enqueue(ctx, jobs.Request{Message: tc.msg, Coalesce: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !res.Coalesced || res.Duplicate || res.Queue != "default" {
			t.Fatalf("%s: result %+v, want coalesced into default", tc.name, res)
		}
		tasks, err := b.inspector.ListAggregatingTasks("default", tc.group)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("%s: group %q holds %d tasks (%v), want 1", tc.name, tc.group, len(tasks), err)
		}
		if tasks[0].Type != jobs.TypeDigestItem || tasks[0].ID != res.TaskID {
			t.Fatalf("%s: grouped task %s of type %s, want %s of %s", tc.name, tasks[0].ID, tasks[0].Type, res.TaskID, jobs.TypeDigestItem)
		}
		it, err := jobs.DecodeItem(tasks[0].Payload)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if it.ID != res.TaskID || it.Message.Text != tc.msg.Text || it.Message.MaxRetry == nil || *it.Message.MaxRetry != 25 {
			t.Fatalf("%s: payload %+v", tc.name, it)
		}
	}
	tasks, _ := b.inspector.ListAggregatingTasks("default", "42")
	it, _ := jobs.DecodeItem(tasks[0].Payload)
	if it.Item.Title != "disk full on db-1" || it.Item.Summary != "only 2% left" || it.Message.ParseMode != "HTML" {
		t.Fatalf("derived item %+v of message %+v", it.Item, it.Message)
	}
	// A grouped task waits for its aggregation: no worker is woken for it.
	if n, _ := b.rdb.LLen(ctx, keys.WakeList()).Result(); n != 0 {
		t.Fatalf("%d wake-up tokens pushed for grouped tasks, want 0", n)
	}
}

func TestEnqueueCriticalIsNeverCoalesced(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	res, err := enq.Enqueue(context.Background(), jobs.Request{Queue: "critical", Coalesce: true,
		Message: jobs.SendMessage{Chat: "42", Text: "db down"}, Item: &jobs.DigestItem{Title: "db down"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := b.inspector.GetTaskInfo("critical", res.TaskID)
	if err != nil || res.Coalesced || info.Type != jobs.TypeSendMessage || info.State.String() != "pending" {
		t.Fatalf("critical message: result %+v, task %+v (%v); want a pending SendMessage", res, info, err)
	}
}

func TestEnqueueCoalescedIdempotency(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	ctx := context.Background()
	req := jobs.Request{Coalesce: true, Message: jobs.SendMessage{Chat: "42", Text: "once", IdempotencyKey: "alert-7"},
		Item: &jobs.DigestItem{Title: "once", URL: "https://example.com/7"}}
	first, err := enq.Enqueue(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.TaskID != jobs.IdempotencyID("", "alert-7") {
		t.Fatalf("item id %q, want the key's task id", first.TaskID)
	}
	again, err := enq.Enqueue(ctx, req)
	if err != nil || !again.Duplicate || again.TaskID != first.TaskID {
		t.Fatalf("repeat: %+v %v, want a duplicate of %s", again, err, first.TaskID)
	}
	// asynq deletes a grouped task once aggregated; the claim still stops a
	// repeat, into any queue.
	if err := b.inspector.DeleteTask("default", first.TaskID); err != nil {
		t.Fatal(err)
	}
	req.Queue = "low"
	later, err := enq.Enqueue(ctx, req)
	if err != nil || !later.Duplicate || later.Queue != "default" {
		t.Fatalf("repeat after aggregation: %+v %v, want a duplicate in default", later, err)
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored, want 0", n)
	}
}

func TestEnqueueItemConflictIsADuplicate(t *testing.T) {
	t.Parallel()
	enq, _ := newEnqueuer(t, jobs.EnqueueConfig{})
	it := jobs.CoalescedItem{ID: "carry-1", Item: jobs.DigestItem{Title: "t"},
		Message: jobs.SendMessage{Chat: "42", Text: "t", CreatedAt: time.Now()}}
	if res, err := enq.EnqueueItem(context.Background(), "default", it); err != nil || res.Duplicate {
		t.Fatalf("first: %+v %v", res, err)
	}
	if res, err := enq.EnqueueItem(context.Background(), "default", it); err != nil || !res.Duplicate {
		t.Fatalf("second: %+v %v, want a duplicate", res, err)
	}
	if _, err := enq.EnqueueItem(context.Background(), "default", jobs.CoalescedItem{Message: it.Message}); err == nil {
		t.Fatal("an item without an id was accepted")
	}
}

func TestEnqueueCoalescedRejectsBadItems(t *testing.T) {
	t.Parallel()
	enq, b := newEnqueuer(t, jobs.EnqueueConfig{})
	tests := []struct {
		name  string
		item  jobs.DigestItem
		field string
		msg   string
	}{
		{"blank title", jobs.DigestItem{Title: "  "}, "item.title", "is required"},
		{"long title", jobs.DigestItem{Title: strings.Repeat("😀", 1025)}, "item.title", "2050 UTF-16 code units long; the limit is 2048"},
		{"bad title bytes", jobs.DigestItem{Title: "a\xffb"}, "item.title", "not valid UTF-8"},
		{"relative url", jobs.DigestItem{Title: "t", URL: "/alerts/1"}, "item.url", "absolute http or https"},
		{"javascript url", jobs.DigestItem{Title: "t", URL: "javascript:alert(1)"}, "item.url", "absolute http or https"},
		{"long url", jobs.DigestItem{Title: "t", URL: "https://e.com/" + strings.Repeat("a", 2048)}, "item.url", "the limit is 2048"},
		{"long summary", jobs.DigestItem{Title: "t", Summary: strings.Repeat("s", 40000)}, "item.summary", "the limit is 32768"},
	}
	for _, tc := range tests {
		item := tc.item
		_, err := enq.Enqueue(context.Background(), jobs.Request{Coalesce: true, Item: &item,
			Message: jobs.SendMessage{Chat: "42", Text: "x"}})
		var verr *jobs.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != tc.field ||
			!strings.Contains(verr.Fields[0].Message, tc.msg) {
			t.Errorf("%s: got %v, want %s: ...%s", tc.name, err, tc.field, tc.msg)
		}
	}
	if n := len(b.taskKeys()); n != 0 {
		t.Fatalf("%d tasks stored for bad input, want 0", n)
	}
}

func TestDeriveItem(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 80) // 400 units on one line
	tests := []struct {
		name           string
		msg            jobs.SendMessage
		title, summary string
	}{
		{"html", jobs.SendMessage{Text: "<b>Disk</b> &amp; <i>CPU</i>\n\nload <code>9.1</code>", ParseMode: "HTML"}, "Disk & CPU", "load 9.1"},
		{"markdownv2", jobs.SendMessage{Text: `*Deploy* v1\.2\.3 \(prod\)` + "\nby _ci_", ParseMode: "MarkdownV2"}, "Deploy v1.2.3 (prod)", "by ci"},
		{"plain with leading blank lines", jobs.SendMessage{Text: "\n\n  first  \nsecond\nthird"}, "first", "second\nthird"},
		{"markup that does not parse is literal", jobs.SendMessage{Text: "<b>open", ParseMode: "HTML"}, "<b>open", ""},
		{"long first line", jobs.SendMessage{Text: long + "\nrest"}, strings.TrimSpace(long[:255]), "word word"},
	}
	for _, tc := range tests {
		got := jobs.DeriveItem(tc.msg)
		if got.Title != tc.title || !strings.HasPrefix(got.Summary, tc.summary) {
			t.Errorf("%s: got %q / %q, want %q / %q...", tc.name, got.Title, got.Summary, tc.title, tc.summary)
		}
	}
	if got := jobs.DeriveItem(jobs.SendMessage{Text: long + "\nrest"}); !strings.HasSuffix(got.Summary, "word\nrest") ||
		len(got.Title)+len(got.Summary) < len(long)-2 {
		t.Errorf("long first line: the cut part must open the summary, got %q / %q", got.Title, got.Summary)
	}
}

func TestDecodeItem(t *testing.T) {
	t.Parallel()
	ok := `{"v":1,"id":"i1","item":{"title":""},"message":{"chat":"42","text":"derived title\nbody"}}`
	it, err := jobs.DecodeItem([]byte(ok))
	if err != nil || it.Item.Title != "derived title" || it.Item.Summary != "body" {
		t.Fatalf("got %+v %v", it, err)
	}
	for name, payload := range map[string]string{
		"newer version": `{"v":2,"id":"i1","item":{"title":"t"},"message":{"chat":"42","text":"t"}}`,
		"no id":         `{"v":1,"item":{"title":"t"},"message":{"chat":"42","text":"t"}}`,
		"bad message":   `{"v":1,"id":"i1","item":{"title":"t"},"message":{"chat":"","text":"t"}}`,
		"not json":      `digest`,
	} {
		if _, err := jobs.DecodeItem([]byte(payload)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
