package broadcast_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
)

// TestCountsFollowTheRecords: after a mixed run of every way a broadcast
// message's record changes (a worker's progress then its sent record, a
// sent record written again, a permanent failure, a blocked chat, a
// cancel mark then the worker's cancelled record, a failed message
// reopened for a retry and sent, a settled record overwritten by another
// state), the status read from the counts equals the states read from
// each message's record and mark, and they add up to the chats.
func TestCountsFollowTheRecords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	store := ledger.NewStore(f.rdb, ledger.Config{})
	list := chatList(1, 400)
	res, err := f.svc.Create(ctx, broadcast.Request{Chats: list, Text: "hi", From: "app"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(37, 10))
	sent := ledger.Record{State: ledger.StateSent, MessageIDs: []int{1}}.Encode()
	failed := ledger.Record{State: ledger.StateFailed, Reason: "bad_request"}.Encode()
	blocked := ledger.Record{State: ledger.StateFailed, Reason: ledger.ReasonChatBlocked}.Encode()
	cancelled := ledger.Record{State: ledger.StateCancelled, Reason: "cancelled"}.Encode()
	w := func(id, v string) {
		if err := store.Write(ctx, "", id, v, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range list[:300] {
		id := broadcast.TaskID(res.ID, c)
		switch rng.IntN(7) {
		case 0: // two parts: progress, then the settled record, written twice
			w(id, "1:-1:5::5")
			w(id, sent)
			w(id, sent)
		case 1:
			w(id, failed)
		case 2:
			w(id, blocked)
		case 3: // cancelled while held, then settled by the worker
			if _, err := store.MarkCancelled(ctx, "", res.ID, []string{id}, "app"); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				w(id, cancelled)
			}
		case 4: // failed, reopened for a retry (no part sent), sent
			w(id, failed)
			w(id, "")
			if rng.IntN(2) == 0 {
				w(id, sent)
			}
		case 5: // a settled record overwritten by another state
			w(id, cancelled)
			w(id, failed)
		default: // still on its way
		}
	}
	st, err := f.svc.Status(ctx, res.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := perMember(t, f.rdb, res.ID, list)
	if st.Counts != want {
		t.Fatalf("counts %+v, the records say %+v", st.Counts, want)
	}
	c := st.Counts
	if sum := c.Queued + c.Sent + c.Failed + c.Blocked + c.Cancelled + c.Cancelling + c.Other; sum != st.Chats || st.Chats != len(list) {
		t.Fatalf("counts add up to %d of %d chats", sum, st.Chats)
	}
	if c.Sent == 0 || c.Failed == 0 || c.Blocked == 0 || c.Cancelled == 0 || c.Cancelling == 0 || c.Queued < 100 {
		t.Fatalf("the run did not reach every state: %+v", c)
	}
	// The broadcast's cancel marks the rest, and counts them.
	st, err = f.svc.Cancel(ctx, res.ID, "app", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := perMember(t, f.rdb, res.ID, list); st.Counts != want || st.Queued != 0 {
		t.Fatalf("after the cancel: counts %+v, the records say %+v", st.Counts, want)
	}
}

// perMember counts the broadcast's messages one by one from their records
// and cancel marks, as the status read before the counts did.
func perMember(t *testing.T, rdb *redis.Client, id string, list []string) broadcast.Counts {
	t.Helper()
	var c broadcast.Counts
	for _, chat := range list {
		task := broadcast.TaskID(id, chat)
		v, _ := rdb.Get(ctx, keys.Bot("").Sent(task)).Result()
		r, ok := ledger.Decode(v)
		switch {
		case ok && r.State == ledger.StateSent:
			c.Sent++
		case ok && r.State == ledger.StateFailed && r.Reason == ledger.ReasonChatBlocked:
			c.Blocked++
		case ok && r.State == ledger.StateFailed:
			c.Failed++
		case ok && r.State == ledger.StateCancelled:
			c.Cancelled++
		case ok:
			c.Other++
		case rdb.Exists(ctx, keys.Bot("").Cancel(task)).Val() == 1:
			c.Cancelling++
		default:
			c.Queued++
		}
	}
	return c
}

// commandCounter counts the commands a client sends, pipelines included.
type commandCounter struct{ n atomic.Int64 }

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "hello" && n != "client" { // a new connection's set-up
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if n := c.Name(); n != "hello" && n != "client" {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// TestStatusReadIsConstant: reading the status of a broadcast of 10,000
// chats, half of them sent, takes as many Redis commands as one of 100.
func TestStatusReadIsConstant(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	store := ledger.NewStore(f.rdb, ledger.Config{})
	counts := map[int]int64{}
	for _, n := range []int{100, 10_000} {
		list := chatList(1, n)
		res, err := f.svc.Create(ctx, broadcast.Request{Chats: list, Text: "hi " + strconv.Itoa(n)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list[:n/2] {
			if err := store.Put(ctx, "", broadcast.TaskID(res.ID, c), ledger.Record{State: ledger.StateSent}); err != nil {
				t.Fatal(err)
			}
		}
		h := &commandCounter{}
		rdb := redis.NewClient(f.rdb.Options())
		t.Cleanup(func() { _ = rdb.Close() })
		rdb.AddHook(h)
		st, err := broadcast.New(rdb, f.enq, nil, store, broadcast.Config{}).Status(ctx, res.ID, nil)
		if err != nil || st.Sent != n/2 || st.Queued != n-n/2 {
			t.Fatalf("status of %d: %+v, %v", n, st, err)
		}
		counts[n] = h.n.Load()
	}
	// Its record, its counts and charged sends, the bot's pacing (two).
	if counts[10_000] != counts[100] || counts[100] > 5 {
		t.Fatalf("status read: %d commands for 100 chats, %d for 10,000; want the same few", counts[100], counts[10_000])
	}
	t.Logf("status read: %d commands for 100 chats, %d for 10,000", counts[100], counts[10_000])
}
