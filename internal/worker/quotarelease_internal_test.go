package worker

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/test/redistest"
)

// TestQuotaReleaseOnlyWhenTheTaskEnds: a message leaves its token's queued
// count when its task ends (sent, archived), not when it is handed back.
func TestQuotaReleaseOnlyWhenTheTaskEnds(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	store := quota.NewStore(rdb, nil)
	created := time.Now().UTC().Truncate(time.Millisecond)
	lim := quota.Limits{QueuedMessages: 10}.WithDefaults()
	if _, err := store.Take(ctx, "cron", lim, created, quota.Want{Name: quota.NameQueued, N: 3}); err != nil {
		t.Fatal(err)
	}
	payload, err := jobs.SendMessage{Chat: "5", Text: "x", From: "cron", CreatedAt: created}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		outcome error
		want    int
	}{
		{broker.Snooze(time.Second, "rate limited"), 3},
		{broker.Retry(time.Second, "x", errors.New("x")), 3},
		{errors.New("lease lost"), 3},
		{nil, 2},
		{broker.Archive("chat_blocked", errors.New("x")), 1},
	} {
		rel := quota.NewReleases(store, time.Hour, slog.New(slog.DiscardHandler))
		q := quotaRelease{next: broker.HandlerFunc(func(context.Context, broker.Task) error { return tc.outcome }), releases: rel}
		if err := q.Handle(ctx, broker.Task{Type: jobs.TypeSendMessage, Payload: payload, Queue: "default"}); err != tc.outcome {
			t.Fatalf("outcome %v became %v", tc.outcome, err)
		}
		if err := rel.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		u, err := store.Take(ctx, "cron", lim, created, quota.Want{Name: quota.NameQueued, N: 0})
		if err != nil || u[0].Used != tc.want {
			t.Fatalf("after %v: %+v %v, want %d counted", tc.outcome, u, err, tc.want)
		}
	}
}
