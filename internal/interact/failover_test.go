package interact

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// pollLog is a bot that notes when each getUpdates is sent.
type pollLog struct {
	bot
	mu    sync.Mutex
	polls []time.Time
}

func (l *pollLog) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]telegram.Update, error) {
	l.mu.Lock()
	l.polls = append(l.polls, time.Now())
	l.mu.Unlock()
	return l.bot.GetUpdates(ctx, offset, timeout)
}

// firstAfter is the first getUpdates sent after t, or the zero time.
func (l *pollLog) firstAfter(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.polls {
		if p.After(t) {
			return p
		}
	}
	return time.Time{}
}

// TestPollerFailoverAfterKill: the holder of a bot's lease dies without
// handing it back (its Redis connection and its long poll cut at once, as
// SIGKILL does); with the default timings the standby's first getUpdates
// comes within 5 s, and a press made in the gap is answered.
func TestPollerFailoverAfterKill(t *testing.T) {
	t.Parallel()
	h := setup(t, options{})
	start := func(owner string, rdb redis.UniversalClient) (*poller, *pollLog, context.CancelFunc) {
		log := &pollLog{bot: h.bots["pages"]}
		p, err := newPoller(pollerConfig{Redis: rdb, Bots: map[string]bot{"pages": log}, Tasks: h.tasks(t), Owner: owner,
			Logger: h.log.With("poller", owner), Metrics: h.metrics})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := p.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Shutdown)
		return p, log, cancel
	}
	owner := func() string { return h.rdb.Get(h.ctx, keys.Bot("pages").UpdatesLease()).Val() }

	deadRedis := redis.NewClient(&redis.Options{Addr: h.redis.Addr})
	_, deadLog, kill := start("doomed", deadRedis)
	h.waitFor(t, "the first poller to poll", func() bool { return owner() == "doomed" && !deadLog.firstAfter(time.Time{}).IsZero() })
	_, liveLog, _ := start("standby", h.rdb)
	msg := h.sendAlert(t, subject("pages", "fp-failover"))
	time.Sleep(1500 * time.Millisecond) // the standby has tried the lease and waits

	killed := time.Now()
	_ = deadRedis.Close()
	kill()
	q := h.press(t, msg, alice, buttons.Ack)

	var next time.Time
	h.waitFor(t, "the standby's first getUpdates", func() bool { next = liveLog.firstAfter(killed); return !next.IsZero() })
	gap := next.Sub(killed)
	t.Logf("from the kill to the next getUpdates: %v", gap)
	if gap > 5*time.Second {
		t.Errorf("the next getUpdates came %v after the holder died, want at most 5s", gap)
	}
	got := h.answered(t, "pages", q.ID)
	if got.Answer.Text != "Acknowledged" {
		t.Errorf("the press made in the gap was answered %q", got.Answer.Text)
	}
	t.Logf("press answered %v after it was made", got.Answer.At.Sub(q.At))
	if owner() != "standby" {
		t.Errorf("the lease is held by %q, want the standby", owner())
	}
	if n := h.fake.Stats().Bots["pages"].Rejected; n != 0 {
		t.Errorf("Telegram refused %d requests of pages (409: overlapping getUpdates?)", n)
	}
}
