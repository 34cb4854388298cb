package worker_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// killingSender kills Redis right after Telegram accepted the first message
// and says so on accepted.
type killingSender struct {
	worker.Sender
	srv      *redistest.Server
	once     sync.Once
	accepted chan struct{}
}

func (k *killingSender) Send(ctx context.Context, g ratelimit.Grant, m telegram.Message) (telegram.Sent, error) {
	sent, err := k.Sender.Send(ctx, g, m)
	if err == nil {
		k.once.Do(func() {
			k.srv.Kill()
			close(k.accepted)
		})
	}
	return sent, err
}

// A send that Telegram accepted while Redis was away is still recorded once
// Redis is back, so that a redelivery of the task does not send it again.
func TestSendIsRecordedAcrossARedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	fake, err := telegramfake.Start(telegramfake.Config{TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	tg, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fake.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sender := &killingSender{Sender: tg, srv: srv, accepted: make(chan struct{})}
	w, err := worker.New(worker.Config{
		Redis:           &redis.UniversalOptions{Addrs: []string{srv.Addr}},
		Sender:          sender,
		Limits:          scaledLimits(),
		ShutdownTimeout: 5 * time.Second,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	rdb := srv.Client(t)
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	t.Cleanup(func() { _ = enq.Close() })
	res, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "31", Text: "sent while Redis restarts"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sender.accepted:
	case <-ctx.Done():
		t.Fatal("the message was never sent")
	}
	// Redis stays down for 3 s (the outage under test), longer than the
	// go-redis client's own retries last.
	time.Sleep(3 * time.Second)
	srv.Restart(t)
	for {
		n, err := rdb.Exists(ctx, keys.Bot("").Sent(res.TaskID)).Result()
		if err == nil && n == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no send record for task %s after Redis came back (last error %v)", res.TaskID, err)
		case <-time.After(20 * time.Millisecond): // no notification exists for a key being written
		}
	}
	if n := len(fake.Messages()); n != 1 {
		t.Fatalf("%d messages delivered, want 1", n)
	}
}

// TestFinishedRecordIsTheLedgers: a delivered message's record is the
// ledger's, kept for the ledger's retention (not SentRetention), and says
// sent with the message id the fake gave (see also
// TestSendRecordRetention).
func TestFinishedRecordIsTheLedgers(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	res := b.send(t, jobs.SendMessage{Chat: "77", Text: "once"}, "")
	b.waitGone(t, "default", res.TaskID)
	ttl := b.rdb.TTL(b.ctx, keys.Bot("").Sent(res.TaskID)).Val()
	if ttl <= ledger.DefaultRetention-time.Hour || ttl > ledger.DefaultRetention {
		t.Fatalf("record of a delivered message lives %v, want the ledger's %v", ttl, ledger.DefaultRetention)
	}
	rec, ok, err := ledger.NewStore(b.rdb, ledger.Config{}).Get(b.ctx, "", res.TaskID)
	msgs := b.fake.Messages()
	if err != nil || !ok || rec.State != ledger.StateSent || len(msgs) != 1 || len(rec.MessageIDs) != 1 || rec.MessageIDs[0] != msgs[0].MessageID {
		t.Fatalf("ledger record = %+v (%v, %v); fake sent %+v", rec, ok, err, msgs)
	}
}
