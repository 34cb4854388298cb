package feeds

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// feedRoutes sends the "releases" feed to one chat on the low queue and
// everything else to a catch-all.
const feedRoutes = `
defaults:
  parse_mode: HTML
routes:
  - name: releases
    match:
      source: feed
      labels: {feed: releases}
    queue: low
    destinations: ["-1001000000009"]
  - name: catch-all
    default: true
    destinations: ["42"]
`

// forwarder records the alerts it passes to the real Router.
type forwarder struct {
	next   alerts.Dispatcher
	mu     sync.Mutex
	alerts []alerts.Alert
}

func (f *forwarder) Dispatch(ctx context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	out, err := f.next.Dispatch(ctx, batch)
	if err == nil {
		f.mu.Lock()
		f.alerts = append(f.alerts, batch...)
		f.mu.Unlock()
	}
	return out, err
}

func TestNewItemsBecomeTasksThroughTheRouter(t *testing.T) {
	t.Parallel()
	server := redisServer(t)
	rdb := server.Client(t)
	table, err := alerts.ParseRoutes("routes.yaml", []byte(feedRoutes))
	if err != nil {
		t.Fatal(err)
	}
	router, err := alerts.NewRouter(table, jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), alerts.RouterConfig{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fwd := &forwarder{next: router}
	srv := newFeedServer(t, bothValidators, rssDoc(numbered(1, 3)...))
	p := newPoller(t, rdb, fwd, []feed{{Name: "releases", URL: srv.URL()}}, nil)

	wantResult(t, first(p.pollNow(t, "releases")), resultFirst)
	items := append([]testItem{
		{GUID: "v2", Title: "Fish & <chips> 2.0", Link: "https://feed.test/v2", Desc: "<p>Now with <b>vinegar</b></p>"},
	}, numbered(1, 3)...)
	srv.set(rssDoc(items...))
	wantResult(t, first(p.pollNow(t, "releases")), resultNew)
	wantResult(t, first(p.pollNow(t, "releases")), resultNotModified)

	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: server.Addr})
	t.Cleanup(func() { _ = insp.Close() })
	tasks, err := insp.ListPendingTasks(jobs.QueueLow)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("%d tasks in the low queue, want 1", len(tasks))
	}
	m, err := jobs.Decode(tasks[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if m.Chat != "-1001000000009" || m.ParseMode != "HTML" || m.IdempotencyKey == "" {
		t.Fatalf("task chat %q mode %q key %q", m.Chat, m.ParseMode, m.IdempotencyKey)
	}
	for _, want := range []string{"Fish &amp; &lt;chips&gt; 2.0", "Now with vinegar", "https://feed.test/v2"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("message text %q lacks %q", m.Text, want)
		}
	}
	if strings.Contains(m.Text, "<b>vinegar") {
		t.Errorf("the item's HTML reached the message: %q", m.Text)
	}
	if def, err := insp.ListPendingTasks(jobs.QueueDefault); err == nil && len(def) != 0 {
		t.Fatalf("%d tasks went to the catch-all", len(def))
	}

	// Dispatching the same item again (a poll that died before recording
	// it) enqueues nothing: the fingerprint is the idempotency key.
	fwd.mu.Lock()
	again := append([]alerts.Alert(nil), fwd.alerts...)
	fwd.mu.Unlock()
	res, err := router.Dispatch(context.Background(), again)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Messages {
		if !r.Duplicate {
			t.Fatalf("a repeated dispatch enqueued %+v", r)
		}
	}
	if tasks, _ := insp.ListPendingTasks(jobs.QueueLow); len(tasks) != 1 {
		t.Fatalf("%d tasks after the repeat, want 1", len(tasks))
	}
}
