package broadcast_test

import (
	"errors"
	"testing"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
)

// TestStatusCounts: each message is counted from its ledger record, as a
// worker leaves it: sent, failed, failed because the chat blocked the bot,
// cancelled, still on its way (no record, or a progress record).
func TestStatusCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	list := chatList(100, 10)
	res, err := f.svc.Create(ctx, broadcast.Request{Chats: list, Text: "hi", From: "app"})
	if err != nil {
		t.Fatal(err)
	}
	f.settle(t, res.ID, "100", ledger.Record{State: ledger.StateSent, Chat: "100", MessageIDs: []int{7}})
	f.settle(t, res.ID, "101", ledger.Record{State: ledger.StateSent, Chat: "101", MessageIDs: []int{8}})
	f.settle(t, res.ID, "102", ledger.Record{State: ledger.StateFailed, Reason: "bad_request"})
	f.settle(t, res.ID, "103", ledger.Record{State: ledger.StateFailed, Reason: ledger.ReasonChatBlocked})
	f.settle(t, res.ID, "104", ledger.Record{State: ledger.StateCancelled})
	// A worker's progress record: the message is on its way.
	if err := f.rdb.Set(ctx, keys.Bot("").Sent(broadcast.TaskID(res.ID, "105")), "1:-1:9", 0).Err(); err != nil {
		t.Fatal(err)
	}
	st, err := f.svc.Status(ctx, res.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := broadcast.Counts{Queued: 5, Sent: 2, Failed: 1, Blocked: 1, Cancelled: 1}
	if st.Counts != want || st.Chats != 10 || st.State != "sending" || st.From != "app" || st.Bot != "default" {
		t.Fatalf("status %+v, want counts %+v", st, want)
	}
	if st.ETASeconds == nil || *st.ETASeconds != 0.1 {
		t.Errorf("ETA %v s, want 0.1 (5 messages at 30/s)", st.ETASeconds)
	}
	if _, err := f.svc.Status(ctx, res.ID, func(from string) bool { return from == "other" }); !errors.Is(err, broadcast.ErrNotFound) {
		t.Errorf("another token's view: %v, want ErrNotFound", err)
	}
	if _, err := f.svc.Status(ctx, "bc-unknown", nil); !errors.Is(err, broadcast.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	for _, c := range list[5:] {
		f.settle(t, res.ID, c, ledger.Record{State: ledger.StateSent})
	}
	if st, _ := f.svc.Status(ctx, res.ID, nil); st.State != "done" || st.Sent != 7 || st.ETA != nil {
		t.Errorf("all settled: %+v, want done with no ETA", st)
	}
}

// TestStarsCounter: the status reads the broadcast's count of charged
// sends and shows what they cost.
func TestStarsCounter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	res, err := f.svc.Create(ctx, broadcast.Request{Bot: "pages", Chats: []string{"1"}, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.IncrBy(ctx, keys.Bot("pages").BroadcastCharged(res.ID), 12).Err(); err != nil {
		t.Fatal(err)
	}
	if st, err := f.svc.Status(ctx, res.ID, nil); err != nil || st.ChargedSends != 12 || st.Stars < 1.19 || st.Stars > 1.21 {
		t.Errorf("charged %d, stars %v, %v; want 12 and 1.2", st.ChargedSends, st.Stars, err)
	}
	if id, ok := keys.BroadcastOf(broadcast.TaskID(res.ID, "1")); !ok || id != res.ID {
		t.Errorf("BroadcastOf(a message's task id) = %q, %v; want %q", id, ok, res.ID)
	}
	if _, ok := keys.BroadcastOf("idem-0123"); ok {
		t.Error("BroadcastOf took a message's task id for a broadcast's")
	}
}

// TestCancel: a cancel marks every message not settled, leaves the
// settled ones alone, and counts the marked ones as cancelling until a
// worker settles them; a second cancel marks nothing more.
func TestCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	list := chatList(1, 2500)
	res, err := f.svc.Create(ctx, broadcast.Request{Chats: list, Text: "hi", From: "app"})
	if err != nil {
		t.Fatal(err)
	}
	f.settle(t, res.ID, "1", ledger.Record{State: ledger.StateSent})
	f.settle(t, res.ID, "2", ledger.Record{State: ledger.StateFailed, Reason: "bad_request"})
	if _, err := f.svc.Cancel(ctx, res.ID, "intruder", func(from string) bool { return from == "intruder" }); !errors.Is(err, broadcast.ErrNotFound) {
		t.Fatalf("another token's cancel: %v, want ErrNotFound", err)
	}
	st, err := f.svc.Cancel(ctx, res.ID, "app", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cancelling != 2498 || st.Queued != 0 || st.Sent != 1 || st.Failed != 1 || st.ETA != nil {
		t.Fatalf("after cancel %+v", st)
	}
	for _, c := range []string{"3", "2500"} {
		by, err := f.rdb.Get(ctx, keys.Bot("").Cancel(broadcast.TaskID(res.ID, c))).Result()
		if err != nil || by != "app" {
			t.Errorf("cancel mark of chat %s = %q, %v; want app", c, by, err)
		}
	}
	if n := f.rdb.Exists(ctx, keys.Bot("").Cancel(broadcast.TaskID(res.ID, "1"))).Val(); n != 0 {
		t.Error("a sent message got a cancel mark")
	}
	// A worker settles one of them as cancelled.
	f.settle(t, res.ID, "3", ledger.Record{State: ledger.StateCancelled})
	st, err = f.svc.Cancel(ctx, res.ID, "app", nil)
	if err != nil || st.Cancelling != 2497 || st.Cancelled != 1 {
		t.Errorf("second cancel %+v, %v", st, err)
	}
}
