package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/redisconn"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// latency enqueues n messages, one every interval, each to its own chat (so
// no chat limit applies), with the producer's own enqueue code, and measures
// from the moment before the enqueue to the fake's acceptance of
// sendMessage. With -v it also sends n messages through the HTTP API and
// reports that path.
func latency(ctx context.Context, f *fleet.Fleet, fake *telegramfake.Server, n int, interval time.Duration) ([]fleet.Message, fleet.Outcome, error) {
	opts, err := (redisconn.Config{URL: f.RedisURL}).UniversalOptions()
	if err != nil {
		return nil, fleet.Outcome{}, err
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	defer enq.Close()
	enqueue := func(m fleet.Message) error {
		_, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: m.Chat, Text: m.Text}})
		return err
	}
	ms, o, err := paced(ctx, fake, n, interval, "S3", enqueue)
	if err != nil || !verbose {
		return ms, o, err
	}
	_, api, err := paced(ctx, fake, n, interval, "S3-api", func(m fleet.Message) error {
		_, _, err := f.Post(ctx, map[string]any{"chat": m.Chat, "text": m.Text})
		return err
	})
	if err != nil {
		return nil, fleet.Outcome{}, err
	}
	fmt.Fprintf(os.Stderr, "S3 through the HTTP API: p50 %v p95 %v p99 %v\n", api.Percentile(50), api.Percentile(95), api.Percentile(99))
	return ms, o, nil
}

func paced(ctx context.Context, fake *telegramfake.Server, n int, interval time.Duration, tag string, send func(fleet.Message) error) ([]fleet.Message, fleet.Outcome, error) {
	base, baseStats := len(fake.Messages()), fake.Stats()
	sentAt := map[string]time.Time{}

	var ms []fleet.Message
	tick := time.NewTicker(interval)
	defer tick.Stop()
	start := time.Now()
	for i := 0; i < n; i++ {
		m := fleet.Message{Chat: fmt.Sprint(60000 + base + i), Text: fmt.Sprintf("%s #%d", tag, i)}
		ms = append(ms, m)
		sentAt[m.Text] = time.Now()
		if err := send(m); err != nil {
			return nil, fleet.Outcome{}, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fleet.Outcome{}, ctx.Err()
		}
	}
	if err := fake.Wait(ctx, base+n); err != nil {
		return nil, fleet.Outcome{}, err
	}
	delivered := fake.Messages()
	o := fleet.Tally(ms, delivered, fleet.StatsSince(fake.Stats(), baseStats), start)
	for _, d := range delivered {
		if t, ok := sentAt[d.Text]; ok {
			o.Latencies = append(o.Latencies, d.At.Sub(t))
		}
	}
	return ms, o, nil
}
