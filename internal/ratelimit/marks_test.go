package ratelimit_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// TestMarksStopASendWithoutTakingASlot: a chat's blocked mark and a
// message's cancel mark make Acquire answer Blocked or Cancelled, and the
// slot they would have taken goes to the next message; Confirm sees a mark
// written while a message slept through its wait.
func TestMarksStopASendWithoutTakingASlot(t *testing.T) {
	t.Parallel()
	b := setup(t, ratelimit.Config{Bot: ratelimit.Per(1, time.Second), Private: ratelimit.Per(1, time.Second), SleepMax: 5 * time.Second})
	ks := keys.Bot("")
	if err := b.rdb.Set(b.ctx, ks.Blocked("7"), `{"reason":"blocked"}`, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.rdb.Set(b.ctx, ks.Cancel("c"), "api", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "7", Queue: "default", TaskID: "a", Ahead: true}); err != nil || d.Kind != ratelimit.Blocked {
		t.Fatalf("acquire for a blocked chat = %+v, %v; want blocked", d, err)
	}
	if d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "8", Queue: "default", TaskID: "c", Ahead: true}); err != nil || d.Kind != ratelimit.Cancelled {
		t.Fatalf("acquire for a cancelled message = %+v, %v; want cancelled", d, err)
	}
	first, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "8", Queue: "default", TaskID: "d", Ahead: true})
	if err != nil || first.Kind != ratelimit.Go || first.Wait != 0 {
		t.Fatalf("first real send = %+v, %v; want go now: the refused ones took no slot", first, err)
	}
	second, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "9", Queue: "default", TaskID: "e", Ahead: true})
	if err != nil || second.Kind != ratelimit.Go || second.Wait <= 0 {
		t.Fatalf("second send = %+v, %v; want go after a wait", second, err)
	}
	if k, err := b.lim.Confirm(b.ctx, "9", "e", second); err != nil || k != ratelimit.Go {
		t.Fatalf("confirm without marks = %v, %v; want go", k, err)
	}
	if err := b.rdb.Set(b.ctx, ks.Cancel("e"), "api", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if k, err := b.lim.Confirm(b.ctx, "9", "e", second); err != nil || k != ratelimit.Cancelled {
		t.Fatalf("confirm after a cancel = %v, %v; want cancelled", k, err)
	}
	if err := b.rdb.Set(b.ctx, ks.Blocked("9"), `{}`, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if k, err := b.lim.Confirm(b.ctx, "9", "e", second); err != nil || k != ratelimit.Blocked {
		t.Fatalf("confirm after a block = %v, %v; want blocked", k, err)
	}
}

// TestCancelGivesBackItsSlot: a message cancelled while it held a slot
// ahead (a reservation stored in Redis, or held in memory and passed back)
// gives the slot back: the next message takes it instead of waiting behind
// a send that will never happen.
func TestCancelGivesBackItsSlot(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{false, true} {
		b := setup(t, ratelimit.Config{Bot: ratelimit.Per(1, time.Second), Private: ratelimit.Per(1, time.Second), SleepMax: 5 * time.Second})
		ks := keys.Bot("")
		if d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "1", Queue: "default", TaskID: "a"}); err != nil || d.Kind != ratelimit.Go {
			t.Fatalf("first = %+v, %v", d, err)
		}
		// The second message's slot is a second away: it waits for it,
		// in Redis (deferred) or in memory (Ahead).
		ask := ratelimit.Ask{Chat: "2", Queue: "default", TaskID: "b", Ahead: held}
		wait, err := b.lim.Acquire(b.ctx, ask)
		if err != nil || wait.Wait <= 0 {
			t.Fatalf("second = %+v, %v; want a wait", wait, err)
		}
		if err := b.rdb.Set(b.ctx, ks.Cancel("b"), "api", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		ask.Resume = wait.Resume
		if d, err := b.lim.Acquire(b.ctx, ask); err != nil || d.Kind != ratelimit.Cancelled {
			t.Fatalf("cancelled = %+v, %v", d, err)
		}
		third, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "3", Queue: "default", TaskID: "c", Ahead: true})
		if err != nil || third.Kind == ratelimit.Cancelled || third.Wait > wait.Wait+50*time.Millisecond {
			t.Fatalf("held=%v: next message = %+v, %v; want at most the cancelled one's wait (%v)", held, third, err, wait.Wait)
		}
		if third.Wait < wait.Wait-time.Second/2 {
			t.Fatalf("held=%v: next message waits %v; the first send's window still binds (%v)", held, third.Wait, wait.Wait)
		}
	}
}
