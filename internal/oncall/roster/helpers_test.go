package roster

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/test/redistest"
)

// outbox is an enqueuer that keeps what it is given, refusing a repeated
// idempotency key as the Enqueuer does (a duplicate stores nothing).
type outbox struct {
	mu    sync.Mutex
	byKey map[string]jobs.SendMessage
	order []jobs.SendMessage
}

func newOutbox() *outbox { return &outbox{byKey: map[string]jobs.SendMessage{}} }

func (o *outbox) Enqueue(_ context.Context, req jobs.Request) (jobs.Result, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := req.Message
	id := jobs.IdempotencyID("", m.IdempotencyKey)
	if _, dup := o.byKey[m.IdempotencyKey]; dup {
		return jobs.Result{TaskID: id, Duplicate: true}, nil
	}
	o.byKey[m.IdempotencyKey] = m
	o.order = append(o.order, m)
	return jobs.Result{TaskID: id, Queue: req.Queue}, nil
}

// sent returns the messages stored so far.
func (o *outbox) sent() []jobs.SendMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]jobs.SendMessage(nil), o.order...)
}

// to returns the texts sent to chat, in order.
func (o *outbox) to(chat string) []string {
	var out []string
	for _, m := range o.sent() {
		if m.Chat == chat {
			out = append(out, m.Text)
		}
	}
	return out
}

// fakeClock is the announcer's clock, moved by the test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) time() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// redisClient starts a redis-server for the test.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	return redistest.Start(t).Client(t)
}

// quiet discards the announcers' logs.
var quiet = slog.New(slog.DiscardHandler)

// The people of the tests.
var (
	alice = oncall.User{ID: 1001, Name: "Alice", Username: "alice"}
	bob   = oncall.User{ID: 1002, Name: "Bob", Username: "bob_ops"}
	carol = oncall.User{ID: 1003, Name: "Carol"}
)
