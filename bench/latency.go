package main

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/fleet"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// latency sends n messages, one every interval, each to its own chat (so no
// chat limit applies), and measures the time from the API call to the fake's
// acceptance of sendMessage.
func latency(ctx context.Context, f *fleet.Fleet, fake *telegramfake.Server, n int, interval time.Duration) ([]fleet.Message, fleet.Outcome, error) {
	sentAt := map[string]time.Time{}
	var ms []fleet.Message
	tick := time.NewTicker(interval)
	defer tick.Stop()
	start := time.Now()
	for i := 0; i < n; i++ {
		m := fleet.Message{Chat: fmt.Sprint(60000 + i), Text: fmt.Sprintf("S3 #%d", i)}
		ms = append(ms, m)
		sentAt[m.Text] = time.Now()
		if _, _, err := f.Post(ctx, map[string]any{"chat": m.Chat, "text": m.Text}); err != nil {
			return nil, fleet.Outcome{}, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fleet.Outcome{}, ctx.Err()
		}
	}
	if err := fake.Wait(ctx, n); err != nil {
		return nil, fleet.Outcome{}, err
	}
	delivered := fake.Messages()
	o := fleet.Tally(ms, delivered, fake.Stats(), start)
	for _, d := range delivered {
		if t, ok := sentAt[d.Text]; ok {
			o.Latencies = append(o.Latencies, d.At.Sub(t))
		}
	}
	return ms, o, nil
}
