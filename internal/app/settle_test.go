package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/test/redistest"
)

// enqueueOne is a dispatcher that stores one message per batch.
type enqueueOne struct{ enq *jobs.Enqueuer }

func (d enqueueOne) Dispatch(ctx context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	res, err := d.enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: "42", Text: batch[0].Title}})
	return alerts.Dispatched{Messages: []jobs.Result{res}}, err
}

// TestFeedDispatchWaitsForTheReplica: the feed poller's dispatcher reports
// a batch whose messages no replica confirmed as failed, so the item stays
// unseen and is polled again; NewEnqueuer takes the wait from the settings.
func TestFeedDispatchWaitsForTheReplica(t *testing.T) {
	t.Parallel()
	master, replica := redistest.StartReplicated(t)
	ctx := context.Background()
	cfg := settings.Producer{Redis: redisconn.Config{URL: master.URL(), WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond}}.WithDefaults()
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	enq := NewEnqueuer(rdb, cfg)
	d := settledDispatcher{d: enqueueOne{enq}, enq: enq}
	if _, err := d.Dispatch(ctx, []alerts.Alert{{Title: "in sync"}}); err != nil {
		t.Fatalf("replica in sync: %v", err)
	}
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = replica.Resume() }()
	_, err = d.Dispatch(ctx, []alerts.Alert{{Title: "lagging"}})
	if !errors.Is(err, durable.ErrNotReplicated) || !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("replica paused: %v, want ErrNotReplicated wrapped in ErrUnavailable", err)
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dispatch(ctx, []alerts.Alert{{Title: "caught up"}}); err != nil {
		t.Errorf("replica resumed: %v", err)
	}
	if err := writableCheck(rdb, "hint")(ctx); err != nil {
		t.Errorf("writableCheck on the master: %v", err)
	}
	var np *durable.NotPrimaryError
	if err := writableCheck(replica.Client(t), "use the master")(ctx); !errors.As(err, &np) || err.Error() != np.Error()+": use the master" {
		t.Errorf("writableCheck on the replica answered %v; want a NotPrimaryError followed by the hint", err)
	}
}
