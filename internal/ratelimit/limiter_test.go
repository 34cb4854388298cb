package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/test/redistest"
)

type bundle struct {
	lim *ratelimit.Limiter
	cfg ratelimit.Config
	ctx context.Context
	rdb redis.UniversalClient
}

func setup(t *testing.T, cfg ratelimit.Config) bundle {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	lim, err := ratelimit.New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{lim: lim, cfg: lim.Config(), ctx: context.Background(), rdb: rdb}
}

// acquire asks for a slot and returns the decision with the time until the
// slot itself (a deferred task comes back SleepMax/2 before its slot).
func (b bundle) acquire(t *testing.T, chat, queue, id string) (ratelimit.Decision, time.Duration) {
	t.Helper()
	d, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: chat, Queue: queue, TaskID: id})
	if err != nil {
		t.Fatal(err)
	}
	switch d.Kind {
	case ratelimit.Go:
		return d, 0
	case ratelimit.Defer:
		return d, d.Wait + b.cfg.SleepMax/2
	}
	return d, d.Wait
}

// settle asks until the answer is no longer a short wait (the chat's turn,
// a millisecond away in the tests that use it), as a worker would.
func (b bundle) settle(t *testing.T, chat, queue, id string) (ratelimit.Decision, time.Duration) {
	t.Helper()
	for {
		d, at := b.acquire(t, chat, queue, id)
		if d.Kind != ratelimit.Again || at > 50*time.Millisecond {
			return d, at
		}
		time.Sleep(at)
	}
}

// Long spans make the expected waits exact up to the few milliseconds a
// script run takes.
var slow = ratelimit.Config{
	Bot:      ratelimit.Unlimited,
	Private:  ratelimit.Per(1, 10*time.Second),
	Group:    ratelimit.Per(1, 2*time.Second).And(ratelimit.Per(3, 30*time.Second)),
	SleepMax: time.Second,
}

func near(got, want time.Duration) bool {
	d := got - want
	return d > -300*time.Millisecond && d < 300*time.Millisecond
}

func TestChatTurnsAreSpreadAndOwned(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	if d, _ := b.acquire(t, "42", "default", "t0"); d.Kind != ratelimit.Go {
		t.Fatalf("first message: %+v, want go now", d)
	}
	for i, id := range []string{"t1", "t2", "t3"} {
		want := time.Duration(i+1) * (10*time.Second + b.cfg.Guard)
		d, at := b.acquire(t, "42", "default", id)
		if d.Kind != ratelimit.Defer || !near(at, want) {
			t.Fatalf("message %s: %+v (slot in %v), want defer to ~%v", id, d, at, want)
		}
		// Asking again returns the same turn; nothing new is reserved.
		again, at2 := b.acquire(t, "42", "default", id)
		if again.Kind != ratelimit.Defer || !near(at2, want) {
			t.Fatalf("message %s asked again: %+v, want the same turn ~%v", id, again, want)
		}
	}
}

// TestGroupWindows checks both of a group's windows: one message per 2 s,
// and no more than 3 in any 30 s. The fourth turn comes 30 s after the
// first, not after an even spreading of 3 per 30 s.
func TestGroupWindows(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	g := b.cfg.Guard
	want := []time.Duration{0, 2*time.Second + g, 4*time.Second + 2*g, 30*time.Second + g, 32*time.Second + 2*g}
	for i, w := range want {
		d, at := b.acquire(t, "-100500", "default", "g"+strconv.Itoa(i))
		if !near(at, w) || (w == 0) != (d.Kind == ratelimit.Go) {
			t.Fatalf("group message %d: %+v (slot in %v), want ~%v", i, d, at, w)
		}
	}
}

// TestBotWindowIsExactAndFirstComeFirstServed: 3 per 2 s, spread a third
// of the window apart, first come first served; the fourth message comes
// one window (and the guard) after the first.
func TestBotWindowIsExactAndFirstComeFirstServed(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Bot = ratelimit.Per(3, 2*time.Second)
	cfg.Private = ratelimit.Unlimited
	b := setup(t, cfg)
	for i := 0; i < 7; i++ {
		want := time.Duration(i)*2*time.Second/3 + time.Duration(i/3)*b.cfg.Guard
		chat := strconv.Itoa(i + 1)
		_, at := b.acquire(t, chat, "default", "m"+chat)
		if !near(at, want) {
			t.Fatalf("message %d: slot in %v, want ~%v", i, at, want)
		}
	}
}

func TestHotChatDoesNotDelayQuietChat(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	for i := 0; i < 50; i++ {
		b.acquire(t, "1", "default", "hot"+strconv.Itoa(i))
	}
	if d, _ := b.acquire(t, "2", "default", "quiet"); d.Kind != ratelimit.Go {
		t.Fatalf("quiet chat: %+v, want go now", d)
	}
	if d, _ := b.acquire(t, "-1001", "default", "group"); d.Kind != ratelimit.Go {
		t.Fatalf("group chat: %+v, want go", d)
	}
}

// TestBotPauseMovesReservedSlotsBehindIt books the bot a few windows ahead,
// then a 429 arrives: every reserved slot, including those reserved before
// the pause, moves behind it in the same order, and the refused message is
// its chat's next one.
func TestBotPauseMovesReservedSlotsBehindIt(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Bot = ratelimit.Per(2, time.Second)
	cfg.Private = ratelimit.Unlimited
	b := setup(t, cfg)
	first, _ := b.acquire(t, "1", "default", "refused")
	if first.Kind != ratelimit.Go || first.Slot == "" {
		t.Fatalf("first message: %+v, want go with a slot", first)
	}
	var before []time.Duration
	var waiting []int // messages told to wait for a slot (the others went at once)
	for i := 2; i <= 7; i++ {
		d, at := b.acquire(t, strconv.Itoa(i), "default", "m"+strconv.Itoa(i))
		if d.Kind != ratelimit.Go {
			before = append(before, at)
			waiting = append(waiting, i)
		}
	}
	if len(waiting) != 6 {
		t.Fatalf("%d of 6 messages wait, want 6 (2 per second, spread 500ms apart, the first slot used)", len(waiting))
	}
	p, err := b.lim.Penalize(b.ctx, "1", first.Slot, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bot < 4900*time.Millisecond || p.Chat < 4900*time.Millisecond || p.Scope() != "bot" || p.Requeued != 1 {
		t.Fatalf("penalize: %+v, want a 5s bot-wide pause and the refused message requeued", p)
	}
	var after []time.Duration
	for _, i := range waiting {
		_, at := b.acquire(t, strconv.Itoa(i), "default", "m"+strconv.Itoa(i))
		if at < 5*time.Second-50*time.Millisecond {
			t.Fatalf("message %d: slot in %v, inside the 5s pause", i, at)
		}
		after = append(after, at)
	}
	if !slices.IsSorted(after) {
		t.Fatalf("slots after the pause %v are not in their order before it %v", after, before)
	}
	if shift := after[0] - before[0]; !near(after[len(after)-1]-before[len(before)-1], shift) {
		t.Fatalf("the schedule did not move as one: before %v, after %v", before, after)
	}
	// The refused message waits for the pause too (for its chat's turn
	// after it, holding no bot-wide slot yet). A fresh message to another
	// chat, whose turn has come, takes the bot-wide slot the refused one
	// left at the head of the moved schedule: not one inside the pause, and
	// not one after the schedule's end while a slot before it is free.
	if _, at := b.acquire(t, "1", "default", "refused"); at < 5*time.Second-50*time.Millisecond {
		t.Fatalf("refused message: slot in %v, inside the pause", at)
	}
	if _, at := b.acquire(t, "99", "default", "fresh"); at < 5*time.Second-50*time.Millisecond || at >= after[0] {
		t.Fatalf("fresh message: slot in %v, want the free slot at the pause's end, before the moved schedule %v", at, after)
	}
}

// TestRepeated429ExtendsThePause: a 429 during a pause extends it; it never
// shortens it.
func TestRepeated429ExtendsThePause(t *testing.T) {
	t.Parallel()
	b := setup(t, slow)
	if _, err := b.lim.Penalize(b.ctx, "5", "", 8*time.Second); err != nil {
		t.Fatal(err)
	}
	p, err := b.lim.Penalize(b.ctx, "6", "", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bot < 7*time.Second {
		t.Fatalf("second, shorter 429: bot pause %v, want the first one's ~8s kept", p.Bot)
	}
	p, _ = b.lim.Penalize(b.ctx, "6", "", 9*time.Second)
	if !near(p.Bot, 9*time.Second) {
		t.Fatalf("longer 429: bot pause %v, want it extended to ~9s", p.Bot)
	}
}

// TestChatOnlyPause: with BotPauseMax negative a 429 pauses its chat only,
// and the chat's waiting messages follow the refused one after the pause.
func TestChatOnlyPause(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.BotPauseMax = -1
	cfg.Private = ratelimit.Per(1, time.Second)
	b := setup(t, cfg)
	first, _ := b.acquire(t, "7", "default", "p0")
	b.acquire(t, "7", "default", "p1")
	b.acquire(t, "7", "default", "p2")
	p, err := b.lim.Penalize(b.ctx, "7", first.Slot, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scope() != "chat" || p.Requeued != 3 {
		t.Fatalf("penalize: %+v, want a chat pause requeueing 3 messages", p)
	}
	var prev time.Duration
	for _, id := range []string{"p0", "p1", "p2"} {
		_, at := b.acquire(t, "7", "default", id)
		if at < 20*time.Second-50*time.Millisecond || at <= prev {
			t.Fatalf("%s: slot in %v, want after the 20s pause and after the previous one (%v)", id, at, prev)
		}
		prev = at
	}
	if d, _ := b.acquire(t, "8", "default", "o1"); d.Kind != ratelimit.Go {
		t.Fatalf("other chat: %+v, want go", d)
	}
}

func TestQueueLimit(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Queues = map[string]ratelimit.Limit{"low": ratelimit.Per(1, 5*time.Second)}
	b := setup(t, cfg)
	if d, _ := b.acquire(t, "1", "low", "a"); d.Kind != ratelimit.Go {
		t.Fatalf("first low message: %+v", d)
	}
	if d, at := b.acquire(t, "2", "low", "b"); d.Kind != ratelimit.Defer || !near(at, 5*time.Second) {
		t.Fatalf("second low message: %+v, want defer ~5s", d)
	}
	if d, _ := b.acquire(t, "3", "default", "c"); d.Kind != ratelimit.Go {
		t.Fatalf("default queue must not be limited by low's limit: %+v", d)
	}
}

// TestPriorityTakesTheEarliestSlot books the bot-wide schedule ten seconds
// ahead with messages to many chats, then asks for slots for critical
// messages: within the allowance each takes the earliest booked slot, whose
// owner moves to the end, so the bot's own window still holds; beyond the
// allowance a critical message queues like the others.
func TestPriorityTakesTheEarliestSlot(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{
		Bot:            ratelimit.Per(1, time.Second),
		Private:        ratelimit.Per(1, time.Hour),
		Group:          ratelimit.Per(1, time.Hour),
		SleepMax:       100 * time.Millisecond,
		PriorityQueues: []string{"critical"},
		Priority:       ratelimit.Per(2, time.Minute),
	}
	b := setup(t, cfg)
	var booked []time.Duration
	for i := 0; i < 10; i++ {
		_, at := b.acquire(t, strconv.Itoa(1000+i), "default", "bulk"+strconv.Itoa(i))
		booked = append(booked, at)
	}
	for i := 0; i < 2; i++ {
		_, at := b.acquire(t, strconv.Itoa(2000+i), "critical", "crit"+strconv.Itoa(i))
		if !near(at, booked[i+1]) {
			t.Fatalf("critical message %d: slot in %v, want the earliest booked one ~%v", i, at, booked[i+1])
		}
	}
	// The displaced messages went to the end, in order.
	for i := 1; i <= 2; i++ {
		_, at := b.acquire(t, strconv.Itoa(1000+i), "default", "bulk"+strconv.Itoa(i))
		if want := booked[9] + time.Duration(i)*(time.Second+b.cfg.Guard); !near(at, want) {
			t.Fatalf("displaced message %d: slot in %v, want ~%v", i, at, want)
		}
	}
	if _, at := b.acquire(t, "2002", "critical", "crit2"); !near(at, booked[9]+3*(time.Second+b.cfg.Guard)) {
		t.Fatalf("critical message beyond the allowance: slot in %v, want the end of the schedule", at)
	}
	// Priority never breaks a chat's own limit.
	b.acquire(t, "4000", "default", "chat-first")
	if d, _ := b.acquire(t, "4000", "critical", "chat-second"); d.Kind == ratelimit.Go {
		t.Fatalf("critical message to a chat that just got one: %+v, want a wait for the chat's turn", d)
	}
}

// TestLateTaskTakesANewSlot: a task that comes back later than the guard
// does not use its stale slot.
func TestLateTaskTakesANewSlot(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Private = ratelimit.Per(1, 300*time.Millisecond)
	cfg.Guard = time.Millisecond
	b := setup(t, cfg)
	b.acquire(t, "3", "default", "a")
	d, at := b.acquire(t, "3", "default", "b")
	if d.Kind != ratelimit.Again {
		t.Fatalf("second message: %+v, want a short wait", d)
	}
	time.Sleep(at + 100*time.Millisecond) // come back 100ms late
	again, _ := b.acquire(t, "3", "default", "b")
	if again.Kind == ratelimit.Go && again.Slot != d.Slot && again.Slot != "" {
		return
	}
	if again.Kind == ratelimit.Go {
		// A new slot may be due at once (nothing else is booked); it must
		// still be a fresh reservation, checked above.
		t.Fatalf("late task: %+v, want a fresh reservation", again)
	}
}

// TestConcurrentSendersKeepEveryWindow runs many simulated workers that
// follow the limiter's decisions (sleeping, deferring, asking again) and
// records when (by Redis' clock) each one was told to send: every window of
// every limit holds over those times, exactly. (Slots are planned a guard
// apart beyond each window; a send may use its slot up to a guard late.)
func TestConcurrentSendersKeepEveryWindow(t *testing.T) {
	t.Parallel()
	concurrentSenders(t, false, false)
}

// TestConcurrentPriorityKeepsEveryWindow: priority messages taking promised
// slots under concurrency, with every wait ending in another ask. (It caught
// the displaced message's new slot being chosen while the slot the priority
// message took was missing from the bot's log.)
func TestConcurrentPriorityKeepsEveryWindow(t *testing.T) {
	t.Parallel()
	concurrentSenders(t, false, true)
}

// TestConcurrentSendersAheadKeepEveryWindow runs the same simulation as a
// worker does it: slots handed out ahead are slept through and confirmed,
// reservations of short waits stay in the senders' memory, and a third of
// the messages come from a priority queue that takes promised slots.
func TestConcurrentSendersAheadKeepEveryWindow(t *testing.T) {
	t.Parallel()
	concurrentSenders(t, true, true)
}

func concurrentSenders(t *testing.T, ahead, prio bool) {
	simulate(t, sim{ahead: ahead, prio: prio, messages: 180, workers: 8})
}

// sim is one run of simulate: messages sent by workers goroutines over
// ten chats, as a worker fleet asks for slots.
type sim struct {
	ahead, prio       bool
	messages, workers int
	// paid, when set, is the bot's paid limit (Limiter.WithPaid), which
	// the bot-wide check then holds the sends to.
	paid ratelimit.Limit
	// chats, when set, replaces the ten default chats.
	chats []string
}

// simulate sends s.messages through the limiter concurrently and checks
// every window over the send times it handed out. It returns the
// decisions' Charged count and the send times, in order.
func simulate(t *testing.T, s sim) (charged int, times []time.Time) {
	t.Helper()
	if testing.Short() {
		t.Skip("timing simulation skipped in -short mode")
	}
	ahead, prio := s.ahead, s.prio
	cfg := ratelimit.Config{
		Bot:      ratelimit.Per(6, 200*time.Millisecond),
		Private:  ratelimit.Per(1, 100*time.Millisecond),
		Group:    ratelimit.Per(1, 100*time.Millisecond).And(ratelimit.Per(3, 600*time.Millisecond)),
		SleepMax: 50 * time.Millisecond,
		Guard:    2 * time.Millisecond,
	}
	if prio {
		cfg.PriorityQueues = []string{"critical"}
		cfg.Priority = ratelimit.Per(2, time.Second)
	}
	b := setup(t, cfg)
	botLimit := cfg.Bot
	if s.paid != nil {
		b.lim = b.lim.WithPaid(ratelimit.Paid{Limit: s.paid, Free: 6, FreePer: 200 * time.Millisecond})
		botLimit = s.paid
	}
	type send struct {
		chat string
		at   time.Time
	}
	var (
		mu    sync.Mutex
		sends []send
		wg    sync.WaitGroup
	)
	chats := []string{"1", "2", "3", "4", "5", "6", "7", "8", "-100", "-200"}
	if s.chats != nil {
		chats = s.chats
	}
	rng := rand.New(rand.NewPCG(1, 2))
	work := make(chan [3]string, s.messages)
	var nCharged atomic.Int64
	for i := 0; i < s.messages; i++ {
		queue := "default"
		if prio && i%3 == 0 {
			queue = "critical"
		}
		work <- [3]string{chats[rng.IntN(len(chats))], "task" + strconv.Itoa(i), queue}
	}
	close(work)
	for w := 0; w < s.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range work {
				at, d, err := b.sendOne(ratelimit.Ask{Chat: job[0], Queue: job[2], TaskID: job[1], Ahead: ahead})
				if err != nil {
					t.Error(err)
					return
				}
				if d.Paid != (s.paid != nil) {
					t.Errorf("decision for %s: Paid %v, want %v", job[1], d.Paid, s.paid != nil)
				}
				if d.Charged {
					nCharged.Add(1)
				}
				mu.Lock()
				sends = append(sends, send{job[0], at})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(sends) != s.messages {
		t.Fatalf("%d sends, want %d", len(sends), s.messages)
	}
	slices.SortFunc(sends, func(a, b send) int { return a.at.Compare(b.at) })
	check := func(name string, times []time.Time, lim ratelimit.Limit) {
		for _, w := range lim {
			for i := w.N; i < len(times); i++ {
				if gap := times[i].Sub(times[i-w.N]); gap < w.Per {
					t.Errorf("%s: sends %d and %d are %v apart, want at least %v (%d per %v)", name, i-w.N, i, gap, w.Per, w.N, w.Per)
				}
			}
		}
	}
	var all []time.Time
	per := map[string][]time.Time{}
	for _, s := range sends {
		all = append(all, s.at)
		per[s.chat] = append(per[s.chat], s.at)
	}
	check("bot", all, botLimit)
	for chat, ts := range per {
		lim := cfg.Private
		if ratelimit.IsGroup(chat) {
			lim = cfg.Group
		}
		check(fmt.Sprintf("chat %s", chat), ts, lim)
	}
	return int(nCharged.Load()), all
}

// sendOne asks for a slot the way the worker does and returns the send
// time by Redis' clock: a short wait is slept through (its reservation held
// in memory when ask.Ahead), a slot handed out ahead is confirmed after the
// wait, and a moved slot is asked for again.
func (b bundle) sendOne(ask ratelimit.Ask) (time.Time, ratelimit.Decision, error) {
	for {
		d, err := b.lim.Acquire(b.ctx, ask)
		if err != nil {
			return time.Time{}, d, err
		}
		ask.Resume = ""
		if d.Kind == ratelimit.Go && d.Wait == 0 {
			return d.At, d, nil
		}
		due := time.Now().Add(d.Wait)
		time.Sleep(d.Wait) // a deferred task comes back after Wait
		if d.Kind == ratelimit.Go {
			k, err := b.lim.Confirm(b.ctx, ask.Chat, ask.TaskID, d)
			if err != nil {
				return time.Time{}, d, err
			}
			if k == ratelimit.Go && time.Since(due) <= b.cfg.Guard/2 {
				return d.At.Add(d.Wait), d, nil
			}
		}
		ask.Resume = d.Resume
	}
}

// TestAheadSlotMovesWithAPause: a slot handed out ahead is not confirmed
// once a 429 pause has moved the schedule, and asking again with the held
// reservation gives the moved slot, behind the pause.
func TestAheadSlotMovesWithAPause(t *testing.T) {
	t.Parallel()
	b := setup(t, ratelimit.Config{Bot: ratelimit.Per(2, 2*time.Second), Private: ratelimit.Per(1, time.Second), SleepMax: 5 * time.Second})
	first, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "1", Queue: "default", TaskID: "a", Ahead: true})
	if err != nil || first.Kind != ratelimit.Go || first.Wait != 0 {
		t.Fatalf("first = %+v, %v; want go now", first, err)
	}
	second, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "2", Queue: "default", TaskID: "b", Ahead: true})
	if err != nil || second.Kind != ratelimit.Go || !near(second.Wait, time.Second) || second.Resume == "" {
		t.Fatalf("second = %+v, %v; want go after the bot's 1 s spread, with a reservation to resume", second, err)
	}
	if k, err := b.lim.Confirm(b.ctx, "2", "b", second); err != nil || k != ratelimit.Go {
		t.Fatalf("confirm before any pause = %v, %v; want go", k, err)
	}
	if _, err := b.lim.Penalize(b.ctx, "1", first.Slot, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if k, err := b.lim.Confirm(b.ctx, "2", "b", second); err != nil || k != ratelimit.Again {
		t.Fatalf("confirm after a 3 s bot pause = %v, %v; want again", k, err)
	}
	again, err := b.lim.Acquire(b.ctx, ratelimit.Ask{Chat: "2", Queue: "default", TaskID: "b", Ahead: true, Resume: second.Resume})
	if err != nil {
		t.Fatal(err)
	}
	if again.Kind == ratelimit.Go && again.Wait < 3*time.Second-300*time.Millisecond {
		t.Fatalf("after the pause: %+v; want nothing before the pause ends", again)
	}
}

// TestAheadHoldsShortReservationsInMemory: with Ahead, a turn the caller
// sleeps through is handed back (Decision.Resume) instead of stored; Hold
// stores it when the task must go back to Redis, and the task keeps its
// turn either way.
func TestAheadHoldsShortReservationsInMemory(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	lim, err := ratelimit.New(rdb, ratelimit.Config{Bot: ratelimit.Unlimited, Private: ratelimit.Per(1, 2*time.Second), SleepMax: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask := func(id, resume string) ratelimit.Decision {
		t.Helper()
		d, err := lim.Acquire(ctx, ratelimit.Ask{Chat: "7", Queue: "default", TaskID: id, Ahead: true, Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := ask("a", ""); d.Kind != ratelimit.Go {
		t.Fatalf("first = %+v", d)
	}
	d := ask("b", "")
	if d.Kind != ratelimit.Again || d.Resume == "" || !near(d.Wait, 2*time.Second) {
		t.Fatalf("second = %+v; want a 2 s wait held in memory", d)
	}
	if n := rdb.Exists(ctx, "{herald}:resv:b").Val(); n != 0 {
		t.Fatalf("a reservation held in memory was stored too")
	}
	if err := lim.Hold(ctx, "b", d.Resume); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "{herald}:resv:b").Val(); n != 1 {
		t.Fatalf("Hold did not store the reservation")
	}
	// A third message queues behind b's turn, held or stored.
	if c := ask("c", ""); !near(c.Wait, 4*time.Second) {
		t.Fatalf("third = %+v; want the turn after b's", c)
	}
	if again := ask("b", d.Resume); again.Kind != ratelimit.Again || !near(again.Wait, 2*time.Second) {
		t.Fatalf("b asking again = %+v; want its own turn, not a new one", again)
	}
}

// TestPriorityGoesFirstInItsChat queues 100 default messages for one chat,
// then a critical one: it takes the chat's next turn, and the waiting
// messages each move back by one turn, still one window apart.
func TestPriorityGoesFirstInItsChat(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.PriorityQueues = []string{"critical"}
	cfg.Priority = ratelimit.Per(3, time.Second)
	b := setup(t, cfg)
	var turns []time.Duration
	for i := 0; i < 100; i++ {
		_, at := b.acquire(t, "77", "default", "d"+strconv.Itoa(i))
		turns = append(turns, at)
	}
	_, at := b.acquire(t, "77", "critical", "crit")
	if !near(at, turns[1]) {
		t.Fatalf("critical message: turn in %v, want the chat's next turn ~%v", at, turns[1])
	}
	// Message 0 already went; message i (i >= 1) now has message i+1's turn,
	// and the last one a new turn one window after the old last.
	b.expectMovedBack(t, "77", "d", turns, 10*time.Second+b.cfg.Guard)
}

// expectMovedBack checks that messages 1 to len(was)-1 of chat (task ids
// prefix+i) each hold the slot message i+1 held (was), and the last one a
// new slot step after the old last, in order.
func (b bundle) expectMovedBack(t *testing.T, chat, prefix string, was []time.Duration, step time.Duration) {
	t.Helper()
	var prev time.Duration
	for i := 1; i < len(was); i++ {
		_, got := b.acquire(t, chat, "default", prefix+strconv.Itoa(i))
		want := was[len(was)-1] + step
		if i+1 < len(was) {
			want = was[i+1]
		}
		if got <= prev || !near(got, want) {
			t.Fatalf("chat %s message %d: slot in %v after %v, want ~%v (before: %v)", chat, i, got, prev, want, was)
		}
		prev = got
	}
}

// TestPriorityDisplacesAChatInOrder: when the slot a priority message takes
// belongs to a chat with later slots too, that chat's messages each move
// back by one slot, so the chat keeps its order.
func TestPriorityDisplacesAChatInOrder(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{
		Bot:            ratelimit.Per(1, time.Second),
		Private:        ratelimit.Per(1, time.Millisecond),
		Guard:          time.Microsecond,
		SleepMax:       100 * time.Millisecond,
		PriorityQueues: []string{"critical"},
		Priority:       ratelimit.Per(1, time.Minute),
	}
	b := setup(t, cfg)
	var booked []time.Duration
	for i := 0; i < 5; i++ {
		_, at := b.settle(t, "10", "default", "a"+strconv.Itoa(i))
		booked = append(booked, at)
	}
	_, at := b.settle(t, "20", "critical", "crit")
	if !near(at, booked[1]) {
		t.Fatalf("critical message: slot in %v, want chat 10's second slot ~%v (booked %v)", at, booked[1], booked)
	}
	b.expectMovedBack(t, "10", "a", booked, time.Second)
}

// TestBotPauseKeepsTheChatsPlace: within a bot-wide pause the refused
// message takes its chat's first slot (behind the pause) and the chat's
// other messages move back by one slot each, so the chat keeps its order
// and its place in the schedule instead of starting again at its end.
func TestBotPauseKeepsTheChatsPlace(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{
		Bot:      ratelimit.Per(1, time.Second),
		Private:  ratelimit.Per(1, time.Millisecond),
		Guard:    time.Microsecond,
		SleepMax: 100 * time.Millisecond,
	}
	b := setup(t, cfg)
	first, _ := b.settle(t, "1", "default", "r")
	if first.Kind != ratelimit.Go {
		t.Fatalf("first message: %+v, want go", first)
	}
	// Chat 1's next two messages and another chat's get slots 1 s apart:
	// chat 1 at +1 s and +3 s, chat 2 at +2 s.
	_, a1 := b.settle(t, "1", "default", "a")
	_, o1 := b.settle(t, "2", "default", "o")
	_, a2 := b.settle(t, "1", "default", "b")
	if !(a1 < o1 && o1 < a2) {
		t.Fatalf("slots: a %v, o %v, b %v; want a < o < b", a1, o1, a2)
	}
	p, err := b.lim.Penalize(b.ctx, "1", first.Slot, 2*time.Second)
	if err != nil || p.Requeued != 3 {
		t.Fatalf("penalize: %+v, %v; want the refused message and chat 1's two requeued", p, err)
	}
	_, r := b.acquire(t, "1", "default", "r")
	_, na := b.acquire(t, "1", "default", "a")
	_, no := b.acquire(t, "2", "default", "o")
	_, nb := b.acquire(t, "1", "default", "b")
	if r < 2*time.Second-50*time.Millisecond {
		t.Fatalf("refused message: slot in %v, inside the 2s pause", r)
	}
	if !(r < no && no < na && na < nb) {
		t.Fatalf("after the pause: r %v, o %v, a %v, b %v; want r (chat 1's first slot) < o < a (chat 1's second) < b (a new slot at the end)", r, no, na, nb)
	}
}

// TestBotsHaveTheirOwnWindowsAndPauses: Telegram's limits are per bot, so a
// bot's full window and a 429 pause leave another bot's slots untouched;
// and the same task id under two bots holds two reservations.
func TestBotsHaveTheirOwnWindowsAndPauses(t *testing.T) {
	t.Parallel()
	cfg := slow
	cfg.Bot = ratelimit.Per(3, 2*time.Second)
	cfg.Private = ratelimit.Unlimited
	b := setup(t, cfg)
	pages, status := b.lim.ForBot("pages"), b.lim.ForBot("status")
	if pages.Bot() != "pages" || b.lim.Bot() != "" {
		t.Fatalf("Bot() = %q / %q", pages.Bot(), b.lim.Bot())
	}
	ask := func(l *ratelimit.Limiter, chat, id string) time.Duration {
		t.Helper()
		d, err := l.Acquire(b.ctx, ratelimit.Ask{Chat: chat, Queue: "default", TaskID: id})
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind == ratelimit.Go {
			return 0
		}
		return d.Wait
	}
	// pages fills its window of 3; its 4th waits for the window to pass.
	for i := range 3 {
		if w := ask(pages, strconv.Itoa(i+1), "p"+strconv.Itoa(i)); w >= 2*time.Second {
			t.Fatalf("pages message %d waits %v, inside its first window", i, w)
		}
	}
	if w := ask(pages, "9", "p3"); w < time.Second {
		t.Fatalf("pages' 4th message waits %v, want the next window", w)
	}
	// status, on the same Redis, starts with an empty window.
	if w := ask(status, "1", "s0"); w != 0 {
		t.Fatalf("status' first message waits %v behind pages' window", w)
	}
	// A 429 pause on pages leaves status alone.
	if _, err := pages.Penalize(b.ctx, "1", "", 8*time.Second); err != nil {
		t.Fatal(err)
	}
	if w := ask(status, "2", "s1"); w > time.Second {
		t.Fatalf("status waits %v after pages' 429", w)
	}
	if w := ask(pages, "3", "p4"); w < 7*time.Second {
		t.Fatalf("pages waits %v after its own 429 of 8s", w)
	}
	// One task id, two bots: two reservations, one per bot.
	if w1, w2 := ask(pages, "4", "same"), ask(status, "4", "same"); w1 < 7*time.Second || w2 > time.Second {
		t.Fatalf("same id: pages waits %v, status %v", w1, w2)
	}
}
