// Package local runs the whole of Herald in one process for trying it out:
// an in-memory Redis (miniredis), the producer API with the Asynq web UI, a
// worker, and — unless a real bot token is given — the fake Telegram Bot API.
// Nothing is persisted: stopping the process loses every queued message.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// Options configure the local mode.
type Options struct {
	// Listen is the API and web UI address; default 127.0.0.1:8080.
	Listen string
	// TelegramToken, when set, sends to the real Bot API (TelegramAPIURL)
	// instead of the fake.
	TelegramToken  string
	TelegramAPIURL string
	// RoutesFile is an alert routing file; empty routes every alert to the
	// demo chat 42.
	RoutesFile string
	// Out receives the banner with the URLs.
	Out io.Writer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Ready, when set, is called once everything runs.
	Ready func(Endpoints)
}

// Endpoints are the base URLs of a running local Herald.
type Endpoints struct {
	API string // producer API and web UI, e.g. http://127.0.0.1:8080
	// FakeTelegram is the fake Bot API's base URL ("" with a real token);
	// its /fake/messages lists what was delivered.
	FakeTelegram string
}

// demoChat receives every alert when no routing file is given.
const demoChat = "42"

// Run starts everything and blocks until ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:8080"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	log := o.Logger

	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return fmt.Errorf("local: start in-memory redis: %w", err)
	}
	defer mr.Close()
	redisURL := "redis://" + mr.Addr() + "/0"

	token, apiURL := o.TelegramToken, o.TelegramAPIURL
	var fake *telegramfake.Server
	if token == "" {
		token = telegramfake.DefaultToken
		var err error
		fake, err = telegramfake.Start(telegramfake.Config{Token: token, Logger: log})
		if err != nil {
			return fmt.Errorf("local: start fake Telegram: %w", err)
		}
		defer fake.Close()
		apiURL = fake.URL()
	}
	if apiURL == "" {
		apiURL = config.DefaultTelegramAPIURL
	}

	pcfg := config.Producer{Redis: config.Redis{URL: redisURL}, Listen: o.Listen, AuthDisabled: true,
		RoutesFile: o.RoutesFile}.WithDefaults()
	if pcfg.RoutesFile == "" {
		pcfg.AlertsDefaultChat = demoChat
	}
	wcfg := config.Worker{Redis: config.Redis{URL: redisURL}, Listen: ""}.WithDefaults()
	wcfg.Listen = ""

	sender, err := telegram.New(telegram.Config{Token: token, APIURL: apiURL})
	if err != nil {
		return err
	}
	reg := app.NewRegistry()
	w, err := app.NewWorker(wcfg, sender, reg, log)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	prod, err := app.NewProducer(pcfg, rdb, asynq.RedisClientOpt{Addr: mr.Addr()}, reg, log)
	if err != nil {
		return err
	}
	defer prod.Close()
	if err := prod.Start(ctx); err != nil {
		return err
	}
	h := prod.Handler()

	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("local: listen on %s: %w (set -listen to another address)", o.Listen, err)
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	go func() { defer wg.Done(); errc <- w.Run(runCtx) }()

	fmt.Fprintf(o.Out, "Herald is running locally (everything in memory: NOTHING IS PERSISTED).\n")
	fmt.Fprintf(o.Out, "  API:     POST %s/v1/messages   (no auth in local mode)\n", base)
	fmt.Fprintf(o.Out, "  Web UI:  %s%s/\n", base, pcfg.MonitoringPath)
	fmt.Fprintf(o.Out, "  Metrics: %s/metrics\n", base)
	if fake != nil {
		fmt.Fprintf(o.Out, "  Telegram: fake Bot API at %s — delivered messages: %s/fake/messages\n", fake.URL(), fake.URL())
	} else {
		fmt.Fprintf(o.Out, "  Telegram: %s (real bot token)\n", apiURL)
	}
	fmt.Fprintf(o.Out, "Try:\n  curl -s -X POST %s/v1/messages -H 'Content-Type: application/json' -d '{\"chat\":\"42\",\"text\":\"hello from Herald\"}'\n", base)
	fmt.Fprintf(o.Out, "  curl -s -X POST %s/v1/alerts -H 'Content-Type: application/json' -d '{\"title\":\"Disk almost full\",\"severity\":\"warning\"}'\n", base)
	fmt.Fprintf(o.Out, "  curl -s -X PUT '%s/v1/heartbeats/nightly-backup?interval=1m'\n", base)
	if o.RoutesFile == "" {
		fmt.Fprintf(o.Out, "Alerts, heartbeats and webhooks go to chat %s (pass -routes FILE for a routing file).\n", demoChat)
	}
	if o.Ready != nil {
		ep := Endpoints{API: base}
		if fake != nil {
			ep.FakeTelegram = fake.URL()
		}
		o.Ready(ep)
	}

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = srv.Shutdown(sctx)
	wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
