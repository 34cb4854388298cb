package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/redistest"
)

// ASYNQ is the baseline that CEILING compares with: the same 20,000
// messages to the same fake, its limits as far out of the way, sent by
// plain asynq servers (64 handlers each, one per "worker", in the bench's
// own process) whose handler posts sendMessage and nothing else: no rate
// limit, no ledger, no wake-up list. It enqueues through asynq's client
// with the servers not yet started and counts from their start, as
// CEILING counts from the workers' release; its Redis commands per
// message include the enqueues, as CEILING's do, so the two rows are
// counted the same way.

// asynqBaseline runs ASYNQ with workers servers and returns its row and
// comment line.
func asynqBaseline(ctx context.Context, redisBin, dir string, workers int, seed uint64) (string, error) {
	srv, err := redistest.Launch(redisBin, redistest.Options{Dir: dir})
	if err != nil {
		return "", err
	}
	defer srv.Kill()
	fake, err := telegramfake.Start(telegramfake.Config{Bot: telegramfake.Rate(ceilingFakeBot, time.Second)})
	if err != nil {
		return "", err
	}
	defer fake.Close()
	stats := newRedisStats(srv.Addr)
	defer stats.close()

	ms := fleet.Ceiling(seed)
	before, err := stats.commands(ctx)
	if err != nil {
		return "", err
	}
	cpuBefore, _ := stats.cpu(ctx)
	beforeBy, _ := stats.breakdown(ctx)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	if err := enqueuePlain(ctx, opt, ms); err != nil {
		return "", err
	}
	send := plainSender(fake.URL() + "/bot" + telegramfake.DefaultToken + "/sendMessage")
	start := time.Now()
	var servers []*asynq.Server
	for range workers {
		s := broker.PlainServer(srv.Addr, 64)
		if err := s.Start(asynq.HandlerFunc(send)); err != nil {
			return "", err
		}
		servers = append(servers, s)
	}
	defer func() {
		for _, s := range servers {
			s.Shutdown()
		}
	}()
	if err := fake.Wait(ctx, len(ms)); err != nil {
		return "", fmt.Errorf("ASYNQ: %w (have %d of %d)", err, len(fake.Messages()), len(ms))
	}
	drain := time.Since(start)
	after, err := stats.commands(ctx)
	if err != nil {
		return "", err
	}
	cpuAfter, _ := stats.cpu(ctx)
	if verbose {
		afterBy, _ := stats.breakdown(ctx)
		for name, n := range afterBy {
			if d := n - beforeBy[name]; d > 0 {
				fmt.Fprintf(os.Stderr, "ASYNQ %s: %d\n", name, d)
			}
		}
	}
	o := fleet.Tally(ms, fake.Messages(), fake.Stats(), start)
	n := float64(max(o.Delivered, 1))
	cmds, rate := float64(after-before)/n, n/drain.Seconds()
	cpu := float64((cpuAfter - cpuBefore).Microseconds()) / n
	row := []string{"ASYNQ", "1", fmt.Sprint(workers), fmt.Sprint(len(ms)), drain.Round(time.Millisecond).String(), "-", "-",
		fmt.Sprint(o.TooMany), "-", fmt.Sprint(o.Requests), fmt.Sprintf("%.3f", float64(o.Requests)/n), fmt.Sprint(o.Lost), fmt.Sprint(o.Duplicates),
		"-", fmt.Sprintf("%.1f", cmds), "-", "-", "-", "-", "-"}
	return "| " + strings.Join(row, " | ") + " |" +
		fmt.Sprintf("\n<!-- ASYNQ: %.0f messages/s delivered by plain asynq, %.1f Redis commands/message, %.0f µs of Redis CPU/message (enqueue included) -->", rate, cmds, cpu), nil
}

// enqueuePlain stores ms as asynq tasks through asynq's client, 16 at a
// time.
func enqueuePlain(ctx context.Context, opt asynq.RedisClientOpt, ms []fleet.Message) error {
	c := asynq.NewClient(opt)
	defer c.Close()
	return fleet.Each(ctx, ms, 16, func(m fleet.Message) error {
		body := url.Values{"chat_id": {m.Chat}, "text": {m.Text}}.Encode()
		_, err := c.EnqueueContext(ctx, asynq.NewTask("send", []byte(body)))
		return err
	})
}

// plainSender is the baseline's handler: one sendMessage per task, an
// error (asynq's retry) for any answer but 200.
func plainSender(endpoint string) func(context.Context, *asynq.Task) error {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	return func(ctx context.Context, t *asynq.Task) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(string(t.Payload())))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("sendMessage: HTTP %d", resp.StatusCode)
		}
		return nil
	}
}
