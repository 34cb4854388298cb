package ratelimit_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redistest"
)

type bundle struct {
	lim *ratelimit.Limiter
	ctx context.Context
}

func setup(t *testing.T, cfg ratelimit.Config) bundle {
	t.Helper()
	srv := redistest.Start(t)
	lim, err := ratelimit.New(srv.Client(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{lim: lim, ctx: context.Background()}
}

// Long intervals make the expected waits exact up to the few milliseconds a
// script run takes.
var slow = ratelimit.Config{
	Bot:      ratelimit.Per(1000, time.Second, 1),
	Private:  ratelimit.Per(1, 10*time.Second, 1),
	Group:    ratelimit.Per(1, 30*time.Second, 1),
	SleepMax: time.Second,
}

func near(got, want time.Duration) bool {
	d := got - want
	return d > -time.Second/2 && d < time.Second/2
}

func TestChatTurnsAreSpreadAndOwned(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	first, err := b.lim.Acquire(b.ctx, "42", "default", "t0")
	if err != nil {
		t.Fatal(err)
	}
	if first.Kind != ratelimit.Go || first.Wait > slow.SleepMax {
		t.Fatalf("first message: %+v, want go now", first)
	}
	for i, id := range []string{"t1", "t2", "t3"} {
		d, err := b.lim.Acquire(b.ctx, "42", "default", id)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(i+1) * 10 * time.Second
		if d.Kind != ratelimit.Defer || !near(d.Wait, want) {
			t.Fatalf("message %s: %+v, want defer ~%v", id, d, want)
		}
		// Asking again returns the same turn; nothing new is reserved.
		again, err := b.lim.Acquire(b.ctx, "42", "default", id)
		if err != nil {
			t.Fatal(err)
		}
		if again.Kind != ratelimit.Defer || !near(again.Wait, want) {
			t.Fatalf("message %s asked again: %+v, want the same turn ~%v", id, again, want)
		}
	}
}

func TestHotChatDoesNotDelayQuietChat(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	for i := 0; i < 50; i++ {
		if _, err := b.lim.Acquire(b.ctx, "1", "default", "hot"+string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatal(err)
		}
	}
	d, err := b.lim.Acquire(b.ctx, "2", "default", "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != ratelimit.Go || d.Wait > slow.SleepMax {
		t.Fatalf("quiet chat: %+v, want go now", d)
	}
	g, err := b.lim.Acquire(b.ctx, "-1001", "default", "group")
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind != ratelimit.Go {
		t.Fatalf("group chat: %+v, want go", g)
	}
}

func TestPenalizePausesOnlyThatChat(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	global, err := b.lim.Penalize(b.ctx, "7", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if global {
		t.Fatal("one chat's 429 must not pause the bot")
	}
	d, _ := b.lim.Acquire(b.ctx, "7", "default", "p1")
	if d.Kind != ratelimit.Defer || !near(d.Wait, 20*time.Second) {
		t.Fatalf("paused chat: %+v, want defer ~20s", d)
	}
	o, _ := b.lim.Acquire(b.ctx, "8", "default", "o1")
	if o.Kind != ratelimit.Go {
		t.Fatalf("other chat: %+v, want go", o)
	}
}

func TestFloodPausesWholeBot(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	var global bool
	for _, chat := range []string{"11", "12", "13"} {
		g, err := b.lim.Penalize(b.ctx, chat, 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		global = g
	}
	if !global {
		t.Fatal("three chats refused at once must pause the bot")
	}
	d, _ := b.lim.Acquire(b.ctx, "99", "default", "x")
	if d.Kind != ratelimit.Defer || !near(d.Wait, 15*time.Second) {
		t.Fatalf("fresh chat during a flood pause: %+v, want defer ~15s", d)
	}
}

func TestBotLimitIsFirstComeFirstServed(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Bot = ratelimit.Per(1, 2*time.Second, 1)
	cfg.Private = ratelimit.Limit{}
	b := setup(t, cfg)
	for i, chat := range []string{"1", "2", "3", "4"} {
		d, err := b.lim.Acquire(b.ctx, chat, "default", "m"+chat)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(i) * 2 * time.Second
		if !near(d.Wait, want) {
			t.Fatalf("chat %s: %+v, want wait ~%v", chat, d, want)
		}
	}
}

func TestQueueLimit(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Queues = map[string]ratelimit.Limit{"low": ratelimit.Per(1, 5*time.Second, 1)}
	b := setup(t, cfg)
	if d, _ := b.lim.Acquire(b.ctx, "1", "low", "a"); d.Kind != ratelimit.Go {
		t.Fatalf("first low message: %+v", d)
	}
	if d, _ := b.lim.Acquire(b.ctx, "2", "low", "b"); d.Kind != ratelimit.Defer || !near(d.Wait, 5*time.Second) {
		t.Fatalf("second low message: %+v, want defer ~5s", d)
	}
	if d, _ := b.lim.Acquire(b.ctx, "3", "default", "c"); d.Kind != ratelimit.Go {
		t.Fatalf("default queue must not be limited by low's limit: %+v", d)
	}
}

// TestPriorityQueueGoesAheadOfBookedBotSlots books the bot-wide schedule
// ten seconds ahead with messages to many chats, then asks for slots for
// critical messages: the first ones (the allowance's burst) go at once,
// the next waits for the allowance, and a default-queue message still
// queues behind every booked slot.
func TestPriorityQueueGoesAheadOfBookedBotSlots(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{
		Bot:            ratelimit.Per(1, time.Second, 1),
		Private:        ratelimit.Per(1, time.Hour, 1),
		Group:          ratelimit.Per(1, time.Hour, 1),
		SleepMax:       100 * time.Millisecond,
		PriorityQueues: []string{"critical"},
		Priority:       ratelimit.Per(1, 10*time.Second, 2),
	}
	b := setup(t, cfg)
	for i := 0; i < 10; i++ {
		if _, err := b.lim.Acquire(b.ctx, strconv.Itoa(1000+i), "default", "bulk"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []time.Duration{0, 0, 10 * time.Second} {
		d, err := b.lim.Acquire(b.ctx, strconv.Itoa(2000+i), "critical", "crit"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if want == 0 && (d.Kind != ratelimit.Go || d.Wait > cfg.SleepMax) {
			t.Fatalf("critical message %d: %+v, want go now", i, d)
		}
		if want > 0 && (d.Kind != ratelimit.Defer || d.Wait < 9*time.Second) {
			t.Fatalf("critical message %d beyond the allowance: %+v, want to wait for the bot schedule", i, d)
		}
	}
	// The two that went ahead pushed the bot's schedule: a default message
	// now waits behind 10 booked slots, 2 priority sends and the third
	// critical message's slot.
	d, err := b.lim.Acquire(b.ctx, "3000", "default", "late")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != ratelimit.Defer || !near(d.Wait, 13*time.Second) {
		t.Fatalf("default message after the critical ones: %+v, want defer ~13s", d)
	}
	// A critical message to a chat inside its own interval still waits for
	// the chat: priority never breaks a chat's limit.
	if _, err := b.lim.Acquire(b.ctx, "4000", "default", "chat-first"); err != nil {
		t.Fatal(err)
	}
	d, err = b.lim.Acquire(b.ctx, "4000", "critical", "chat-second")
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind == ratelimit.Go {
		t.Fatalf("critical message to a chat that just got one: %+v, want a wait for the chat's turn", d)
	}
}
