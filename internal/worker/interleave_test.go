package worker_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// TestNoRequestWithoutASlot drives a paid-broadcast stream through every
// early exit the turn-taking has, at random moments (the seed is printed):
// cancels (held, waiting, racing the send), injected 429s and the pauses
// they write, priority messages that take others' slots, chats marked
// blocked while their messages wait, and the day's Stars budget running
// out, which switches the bot from paid to free sends mid-stream. Against
// the strict fake (an unflagged send beyond the free 30 in a second is a
// 429 there, as on Telegram) it asserts that every request Telegram saw
// was a message sent or one of the injected 429s, that none came inside an
// announced wait, and that each message reached Telegram exactly when its
// final state says sent. (Lease loss has its own test in broker.)
func TestNoRequestWithoutASlot(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 36))
	b := setup(t, options{realTime: true, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit, Budget: 1},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 100}})
	msgs := b.messages()

	type msg struct{ id, text, chat string }
	var all []msg
	add := func(chat, queue string) {
		text := fmt.Sprintf("m%d", len(all))
		res := b.send(t, jobs.SendMessage{Chat: chat, Text: text}, queue)
		all = append(all, msg{res.TaskID, text, chat})
	}
	for i := range 120 {
		add(strconv.Itoa(20000+i), "") // a broadcast: one per chat
	}
	for i := range 20 {
		add(strconv.Itoa(30000+i%5), "") // a few chats with a backlog each
	}
	for i := range 10 {
		add("-100400000"+strconv.Itoa(i), "critical") // priority: takes others' slots
	}

	const injected = 4
	var wg sync.WaitGroup
	cancels := map[string]string{}
	var mu sync.Mutex
	for _, i := range rng.Perm(len(all))[:25] {
		wg.Add(1)
		delay := time.Duration(rng.IntN(2500)) * time.Millisecond
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			st, err := msgs.Cancel(b.ctx, all[i].id, "test", nil)
			var late *ledger.TooLateError
			answer := "cancelled"
			switch {
			case errors.As(err, &late):
				answer = "too late"
			case err != nil:
				answer = "error " + err.Error()
			case st.Cancelling:
				answer = "cancelling"
			}
			mu.Lock()
			cancels[all[i].id] = answer
			mu.Unlock()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, at := range []time.Duration{400 * time.Millisecond, 1500 * time.Millisecond} {
			time.Sleep(at)
			b.fake.FailNext(injected/2, telegramfake.FaultTooMany)
		}
	}()
	blocked := []string{"30001", strconv.Itoa(20000 + 100 + rng.IntN(20))}
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		store := chats.NewStore(b.rdb)
		for _, c := range blocked {
			if _, err := store.Block(b.ctx, "", c, chats.Block{Since: time.Now().UTC(), Reason: chats.ReasonBlocked, Source: chats.SourceMyChatMember}); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()

	got := map[string]int{}
	states := map[string]int{}
	for _, m := range all {
		states[string(b.settledState(t, msgs, m.id))]++
	}
	time.Sleep(time.Second) // a send that went on anyway would land here
	for _, m := range b.fake.Messages() {
		got[m.Text]++
	}
	for _, m := range all {
		st, err := msgs.Status(b.ctx, m.id)
		if err != nil {
			t.Fatal(err)
		}
		n := got[m.text]
		if n > 1 || (n == 1) != (st.State == ledger.StateSent) {
			t.Errorf("%s to %s: state %s (cancel answered %q) but Telegram got it %d times", m.text, m.chat, st.State, cancels[m.id], n)
		}
		if cancels[m.id] == "cancelled" && n != 0 {
			t.Errorf("%s: cancelled while waiting in Redis, sent anyway", m.text)
		}
	}
	fs := b.fake.Stats()
	t.Logf("states %v; fake: %d requests, %d accepted, %d 429s (%d injected; bot-wide %d, by chat %v), %d inside a wait, %d paid, %d charged",
		states, fs.Requests, fs.Accepted, fs.TooMany, injected, fs.TooManyBot, fs.TooManyByChat, fs.InsideWait, fs.PaidSends, fs.ChargedSends)
	// A request the worker cut off (its body never followed) is no send.
	if fs.Requests-fs.Incomplete != fs.Accepted+fs.TooMany {
		t.Errorf("%d whole requests for %d messages sent and %d 429s: a request went out that was neither", fs.Requests-fs.Incomplete, fs.Accepted, fs.TooMany)
	}
	if fs.TooMany > injected {
		t.Errorf("%d 429s, more than the %d injected: a send went out without room in Telegram's windows", fs.TooMany, injected)
	}
	if fs.InsideWait != 0 {
		t.Errorf("%d requests inside an announced wait", fs.InsideWait)
	}
	if states[string(ledger.StateSent)] == 0 || fs.PaidSends == 0 || fs.PaidSends == fs.Accepted {
		t.Errorf("the run did not cover what it is for: %v, %d of %d sends paid (the budget must switch the bot to free sends mid-stream)",
			states, fs.PaidSends, fs.Accepted)
	}
}
