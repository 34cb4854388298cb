package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// digestEnv scales Herald's default digest windows (10 s grace period, 30 s
// maximum delay) like Telegram's clock; asynq counts whole seconds, at
// least one.
func digestEnv(scale float64) []string {
	secs := func(d time.Duration) int { return max(1, int(d.Seconds()/scale+0.5)) }
	grace := secs(10 * time.Second)
	maxDelay := max(grace, secs(30*time.Second))
	return []string{
		fmt.Sprintf("HERALD_DIGEST_GRACE_PERIOD=%ds", grace),
		fmt.Sprintf("HERALD_DIGEST_MAX_DELAY=%ds", maxDelay),
	}
}

// coalesced posts a coalescible scenario and waits until every item shows
// in a delivered message. Items hide inside digests, so the fake's count of
// messages says nothing; each new message is checked instead.
func coalesced(ctx context.Context, f *fleet.Fleet, fake *telegramfake.Server, ms []fleet.Message) (fleet.Outcome, error) {
	start, err := f.PostAll(ctx, ms, 32)
	if err != nil {
		return fleet.Outcome{}, err
	}
	for {
		have := len(fake.Messages())
		o := fleet.TallyItems(ms, fake.Messages(), fake.Stats(), start)
		if o.Lost == 0 {
			return o, nil
		}
		if err := fake.Wait(ctx, have+1); err != nil {
			return o, fmt.Errorf("waiting for deliveries: %w (%d of %d items delivered)", err, o.Delivered, len(ms))
		}
	}
}

// digestRow renders one row of S4's table.
func digestRow(row []string, o fleet.Outcome, commands int64, rss int64) string {
	perMsg, perItem := "-", "-"
	if o.Messages > 0 {
		perMsg = fmt.Sprintf("%.1f", float64(o.Delivered)/float64(o.Messages))
	}
	if o.Delivered > 0 {
		perItem = fmt.Sprintf("%.1f", float64(commands)/float64(o.Delivered))
	}
	row = append(row, fmt.Sprint(o.Sent), fmt.Sprint(o.Delivered), fmt.Sprint(o.Lost), fmt.Sprint(o.Duplicates),
		fmt.Sprint(o.Messages), perMsg, o.Drain.Round(time.Millisecond).String(), fmt.Sprint(o.TooMany), perItem, mib(rss))
	return "| " + strings.Join(row, " | ") + " |"
}
