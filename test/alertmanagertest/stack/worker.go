// Package stack starts the Herald side of the tests that drive a real
// Alertmanager against it: a worker in the test's process, sending to the
// fake Bot API. It is apart from package alertmanagertest, which package
// amsilence's own tests import, because it imports internal/app.
package stack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// StartWorker runs a worker in the test's process, on the Redis at
// redisURL, sending to the fake Bot API at fakeURL (the default bot, its
// DefaultToken) with Telegram's limits sped up by scale as the fake's
// TimeScale is: at 10, 30/100ms per bot and 1/100ms, 20/6s per group. It
// stops when the test ends; a Run error fails the test.
func StartWorker(tb testing.TB, redisURL, fakeURL string, scale time.Duration, log *slog.Logger) {
	tb.Helper()
	client, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: fakeURL, Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	wcfg := settings.Worker{Redis: redisconn.Config{URL: redisURL}}.WithDefaults()
	wcfg.Worker.Limits = ratelimit.Config{
		Bot:     ratelimit.Per(30, time.Second/scale),
		Private: ratelimit.Per(1, time.Second/scale),
		Group:   ratelimit.Per(1, time.Second/scale).And(ratelimit.Per(20, time.Minute/scale)),
	}
	wcfg.Worker.BackoffBase, wcfg.Worker.BackoffCap = 100*time.Millisecond, time.Second
	w, err := app.NewWorker(wcfg, map[string]worker.Sender{"default": client}, prometheus.NewRegistry(), log)
	if err != nil {
		tb.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	tb.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			tb.Errorf("worker.Run: %v", err)
		}
	})
}
