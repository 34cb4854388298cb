package broadcast_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/test/redistest"
)

// TestCreateStoresEveryMessage: a 100,000-chat broadcast is stored whole
// before Create returns, one pending task per chat with the text and
// options of the request, and its status counts them all as queued.
func TestCreateStoresEveryMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	list := chatList(1_000_000, 100_000)
	start := time.Now()
	res, err := f.svc.Create(ctx, broadcast.Request{Chats: list, Text: "<b>launch</b> day", ParseMode: "HTML",
		DisableNotification: true, From: "app", Buttons: &jobs.Keyboard{{{Text: "Open", URL: "https://example.com/launch"}}}})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("100,000 chats stored in %s", took.Round(time.Millisecond))
	if res.Queued != len(list) || res.Blocked != 0 || res.Duplicate || !strings.HasPrefix(res.ID, "bc-") {
		t.Fatalf("Create = %+v", res)
	}
	if n := f.pending(t); n != int64(len(list)) {
		t.Fatalf("%d tasks pending, want %d", n, len(list))
	}
	m := f.payload(t, res.ID, list[99_999])
	if m.Chat != list[99_999] || m.Text != "<b>launch</b> day" || m.ParseMode != "HTML" || !m.DisableNotification || m.From != "app" ||
		m.Buttons == nil || m.MaxRetry == nil || *m.MaxRetry != jobs.DefaultMaxRetry {
		t.Errorf("stored message %+v", m)
	}
	start = time.Now()
	st, err := f.svc.Status(ctx, res.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("status of 100,000 messages read in %s", time.Since(start).Round(time.Millisecond))
	if st.Chats != len(list) || st.Queued != len(list) || st.State != "sending" || st.Queue != jobs.QueueBroadcast || st.ETASeconds == nil {
		t.Fatalf("status %+v", st)
	}
	// 100,000 messages at the default 30/s.
	if want := 100_000.0 / 30; *st.ETASeconds < want-1 || *st.ETASeconds > want+1 {
		t.Errorf("ETA %.1fs, want about %.1fs", *st.ETASeconds, want)
	}

	// Every message sent, as workers record it: the records are read too.
	entries := make([]ledger.Entry, len(list))
	for i, c := range list {
		entries[i] = ledger.Entry{TaskID: broadcast.TaskID(res.ID, c), Record: ledger.Record{State: ledger.StateSent, Chat: c,
			Queue: jobs.QueueBroadcast, From: "app", Created: 1767225600000, Settled: 1767225700000, MessageIDs: []int{4711}}}
	}
	if err := ledger.NewStore(f.rdb, ledger.Config{}).PutAll(ctx, entries); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	st, err = f.svc.Status(ctx, res.ID, nil)
	t.Logf("status of 100,000 sent messages read in %s", time.Since(start).Round(time.Millisecond))
	if err != nil || st.Sent != len(list) || st.State != "done" {
		t.Fatalf("status %+v, %v; want all sent", st, err)
	}
}

// TestIdempotentRetry: a repeated request with the same key stores nothing
// and answers as the first; one whose first try failed half-way stores
// the rest, and every chat ends up with exactly one message.
func TestIdempotentRetry(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	list := chatList(500, 3500)
	req := broadcast.Request{Chats: list, Text: "hello", IdempotencyKey: "launch-1", From: "app"}

	// The first try fails on its third pipeline of tasks: Redis went away.
	failing := redis.NewClient(rdb.Options())
	t.Cleanup(func() { _ = failing.Close() })
	failing.AddHook(&failAfter{pipelines: 3})
	_, err := newFixtureOn(t, failing, broadcast.Config{}).svc.Create(ctx, req)
	if !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("first try: %v, want ErrUnavailable", err)
	}
	f := newFixtureOn(t, rdb, broadcast.Config{})
	if n := f.pending(t); n == 0 || n >= int64(len(list)) {
		t.Fatalf("after the failed try %d tasks pending; the test wants a part stored", n)
	}
	st, _ := f.svc.Status(ctx, idOf(t, f), nil)
	if st.State != "storing" {
		t.Errorf("a half-stored broadcast reads %q, want storing", st.State)
	}

	res, err := f.svc.Create(ctx, req)
	if err != nil || res.Duplicate || res.Queued != len(list) {
		t.Fatalf("retry = %+v, %v; want every chat queued", res, err)
	}
	again, err := f.svc.Create(ctx, req)
	if err != nil || !again.Duplicate || again.ID != res.ID || again.Queued != len(list) {
		t.Fatalf("repeat = %+v, %v; want a duplicate of %+v", again, err, res)
	}
	if n := f.pending(t); n != int64(len(list)) {
		t.Errorf("%d tasks pending, want one per chat (%d)", n, len(list))
	}
	other, err := f.svc.Create(ctx, broadcast.Request{Chats: list[:3], Text: "hello", IdempotencyKey: "launch-1", From: "another-token"})
	if err != nil || other.Duplicate || other.ID == res.ID {
		t.Errorf("the same key from another token = %+v, %v; want a broadcast of its own", other, err)
	}
}

// idOf is the id of the one broadcast Redis holds.
func idOf(t *testing.T, f *fixture) string {
	t.Helper()
	keys, err := f.rdb.Keys(ctx, "{herald}:bc:bc-*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, ":chats") {
			return strings.TrimPrefix(k, "{herald}:bc:")
		}
	}
	t.Fatal("no broadcast record")
	return ""
}

// failAfter fails every pipeline after the first few that carry a
// script call: a Redis that went away in the middle of a broadcast.
type failAfter struct {
	pipelines int
	seen      atomic.Int32
}

func (*failAfter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*failAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *failAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(c context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" && int(h.seen.Add(1)) >= h.pipelines {
			return errors.New("connection reset by peer")
		}
		return next(c, cmds)
	}
}

// TestBlockedChatsSkipped: chats that blocked the bot get no message and
// are counted, in the answer and the status.
func TestBlockedChatsSkipped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	store := chats.NewStore(f.rdb)
	for _, c := range []string{"11", "13"} {
		if _, err := store.Block(ctx, "pages", c, chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}); err != nil {
			t.Fatal(err)
		}
	}
	// Blocked for another bot: not for this broadcast's.
	if _, err := store.Block(ctx, "default", "12", chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Create(ctx, broadcast.Request{Bot: "pages", Chats: []string{"10", "11", "12", "13", "14", "10"}, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Queued != 3 || res.Blocked != 2 || res.RepeatedChats != 1 {
		t.Fatalf("Create = %+v; want 3 queued, 2 blocked, 1 repeated", res)
	}
	if n := f.pending(t); n != 3 {
		t.Errorf("%d tasks pending, want 3", n)
	}
	if m := f.payload(t, res.ID, "12"); m.Bot != "pages" {
		t.Errorf("message of chat 12 goes as bot %q", m.Bot)
	}
	st, err := f.svc.Status(ctx, res.ID, nil)
	if err != nil || st.Chats != 5 || st.Blocked != 2 || st.Queued != 3 {
		t.Errorf("status %+v, %v", st, err)
	}
}

// TestOffWithoutQueue: a producer whose queues leave out the broadcast
// queue refuses broadcasts, naming the fix.
func TestOffWithoutQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	enq := jobs.NewEnqueuer(f.rdb, jobs.EnqueueConfig{Queues: []string{"default"}})
	svc := broadcast.New(f.rdb, enq, chats.NewStore(f.rdb), ledger.NewStore(f.rdb, ledger.Config{}), broadcast.Config{})
	if _, err := svc.Create(ctx, broadcast.Request{Chats: []string{"1"}, Text: "x"}); !errors.Is(err, broadcast.ErrOff) || !strings.Contains(err.Error(), "HERALD_QUEUES") {
		t.Errorf("Create = %v, want ErrOff naming HERALD_QUEUES", err)
	}
}
