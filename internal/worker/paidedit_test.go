package worker_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// TestThreadEditDuringAPaidBroadcast: a thread edit cannot carry
// allow_paid_broadcast, so Telegram holds it to the bot's free 30 a second
// even while a paid broadcast sends 60 a second. An edit posted in the
// middle of such a broadcast must go where the free window has room: no
// 429, every message once, and the edit applied.
func TestThreadEditDuringAPaidBroadcast(t *testing.T) {
	t.Parallel()
	// The broadcast runs in its lane, as the worker's settings have it, so
	// that the edit finds a slot while the broadcast still sends.
	lim := telegramLimits()
	lim.Lanes = ratelimit.DefaultLanes
	b := setup(t, options{realTime: true, limits: &lim, paid: &worker.PaidBroadcast{On: true, Limit: paidLimit},
		fakePaid: telegramfake.Paid{Enabled: true, Balance: 1000}})
	open := b.send(t, jobs.SendMessage{Chat: "4242", Text: "FIRING cpu", Thread: &jobs.Thread{Key: "cpu", Mode: jobs.ThreadOpen}}, "default")
	b.waitGone(t, open.Queue, open.TaskID)
	firing := byText(t, b.fake, "FIRING cpu")

	const n = 240
	items := make([]jobs.BatchItem, n)
	for i := range n {
		chat := strconv.Itoa(1000 + i)
		items[i] = jobs.BatchItem{TaskID: keys.BroadcastTaskID(testBroadcast, chat),
			Message: jobs.SendMessage{Chat: chat, Text: "announcement " + strconv.Itoa(i), CreatedAt: time.Now()}}
	}
	if _, err := b.enq.EnqueueBatch(b.ctx, jobs.QueueBroadcast, items); err != nil {
		t.Fatal(err)
	}
	// A second of the broadcast is out: the free window is full.
	if err := b.fake.Wait(b.ctx, 1+60); err != nil {
		t.Fatal(err)
	}
	res := b.send(t, jobs.SendMessage{Chat: "4242", Text: "RESOLVED cpu", Thread: &jobs.Thread{Key: "cpu", Mode: jobs.ThreadEdit, Close: true}}, "default")
	b.waitGone(t, res.Queue, res.TaskID)
	if err := b.fake.Wait(b.ctx, 1+n); err != nil {
		t.Fatalf("waiting for the broadcast: %v (stats %+v)", err, b.fake.Stats())
	}
	waitCounter(t, b.ctx, b.metrics, "herald_messages_sent_total", nil, float64(2+n))

	if st := b.fake.Stats(); st.TooMany != 0 || st.PaidRefused != 0 {
		t.Fatalf("fake stats: %+v", st)
	}
	var bc []telegramfake.Message
	for _, m := range b.fake.Messages() {
		if m.ChatID != firing.ChatID {
			bc = append(bc, m)
		}
	}
	onceEach(t, bc, n)
	if len(b.fake.Messages()) != n+1 {
		t.Fatalf("%d messages sent, want the broadcast and the firing one (edited)", len(b.fake.Messages()))
	}
	cur, ok := b.fake.Lookup(firing.ChatID, firing.MessageID)
	if !ok || cur.Current().Text != "RESOLVED cpu" {
		t.Fatalf("firing message now reads %+v, want the resolution", cur.Current())
	}
	// The edit went while the broadcast was still sending.
	edited := cur.Current().At
	var after int
	for _, m := range bc {
		if m.At.After(edited) {
			after++
		}
	}
	if after == 0 {
		t.Errorf("the edit went after the whole broadcast; it should go in its middle")
	}
}
