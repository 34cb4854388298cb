package heartbeat

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

const testRoutes = `
routes:
  - name: heartbeats
    match:
      source: heartbeat
    destinations: ["-1001000000001"]
  - name: catch-all
    default: true
    destinations: ["42"]
`

// routed wraps a real Router: it signals every successful dispatch and,
// when loseAnswer is set, pretends the first successful dispatch failed
// (as when the answer is lost), so the checker dispatches it again.
type routed struct {
	r          *alerts.Router
	mu         *sync.Mutex
	lost       *bool
	loseAnswer bool
	ok         chan jobs.Result
}

func (d routed) Dispatch(ctx context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	out, err := d.r.Dispatch(ctx, batch)
	if err != nil {
		return out, err
	}
	for _, m := range out.Messages {
		d.ok <- m
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loseAnswer && !*d.lost {
		*d.lost = true
		return out, errRedisGone
	}
	return out, nil
}

// TestRealRouterCriticalQueueOnce runs three checkers, each with its own
// Redis client, Enqueuer and Router as separate producer replicas have,
// through a real routing table: an overdue heartbeat leaves exactly one
// SendMessage task, in the critical queue, even when the first dispatch's
// answer is lost and the alert is dispatched again.
func TestRealRouterCriticalQueueOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	table, err := alerts.ParseRoutes("routes.yaml", []byte(testRoutes))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	lost := false
	ok := make(chan jobs.Result, 100)
	newDispatcher := func(rdb redis.UniversalClient) alerts.Dispatcher {
		r, err := alerts.NewRouter(table, jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), alerts.RouterConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return routed{r: r, mu: &mu, lost: &lost, loseAnswer: true, ok: ok}
	}
	checks := newCheckCounter(3)
	for i := 0; i < 3; i++ {
		rdb := srv.Client(t)
		c, err := NewChecker(testConfig(rdb, newDispatcher(rdb)))
		if err != nil {
			t.Fatal(err)
		}
		c.SetAfterCheck(checks.hook(i))
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Shutdown)
	}
	rdb := srv.Client(t)
	api := newTestHandler(t, rdb, newDispatcher(rdb), nil)
	mustPing(t, api, "/v1/heartbeats/billing-export?interval=1s&grace=0s", "", http.StatusCreated)

	first := waitResult(t, ok)
	second := waitResult(t, ok) // the retry after the lost answer
	checks.waitRounds(t, 3)
	if first.Duplicate || !second.Duplicate || first.TaskID != second.TaskID {
		t.Errorf("dispatches: %+v then %+v; want the retry to be a duplicate of the first", first, second)
	}
	if first.Queue != jobs.QueueCritical {
		t.Errorf("task went to %q, want critical", first.Queue)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	queues, err := insp.Queues()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, q := range queues {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size
	}
	pending, err := insp.ListPendingTasks(jobs.QueueCritical)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || len(pending) != 1 {
		t.Fatalf("%d tasks in Redis (%d pending in critical), want exactly 1 in critical", total, len(pending))
	}
	msg, err := jobs.Decode(pending[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Chat != "-1001000000001" || !strings.Contains(msg.Text, "Heartbeat billing-export is overdue") {
		t.Errorf("task message: chat %q text %q", msg.Chat, msg.Text)
	}
	if n := outboxLen(t, rdb); n != 0 {
		t.Errorf("outbox holds %d notifications, want 0", n)
	}
}

func waitResult(t *testing.T, ch <-chan jobs.Result) jobs.Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-timeAfter():
		t.Fatalf("no dispatch within %v", waitLimit)
		return jobs.Result{}
	}
}
