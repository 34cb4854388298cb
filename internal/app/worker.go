package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/worker"
)

// NewSenders builds one Bot API client per bot the worker serves
// (HERALD_BOTS), each with its own token and all on the same API URL and
// timeout, keyed by bot name for worker.Config.Bots; every value is a
// *telegram.Client. A bot without a token, or whose token file cannot be
// read, is an error naming the bot's variables; every such bot is reported
// at once. No error holds a token.
func NewSenders(cfg settings.Worker) (map[string]worker.Sender, error) {
	bots := cfg.BotNames()
	out := make(map[string]worker.Sender, len(bots))
	var errs []error
	for _, name := range bots {
		token, err := cfg.BotToken(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if token == "" {
			errs = append(errs, missingToken(name, len(bots) > 1))
			continue
		}
		tc := cfg.Telegram.Client
		tc.Token = token
		c, err := telegram.New(tc)
		if err != nil {
			errs = append(errs, fmt.Errorf("bot %q (%s): %w", name, tokenSource(cfg, name), err))
			continue
		}
		out[name] = c
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// missingToken is the error for a bot without a token: it names the two
// variables that may hold it and, when there are several bots, the bot.
func missingToken(name string, several bool) error {
	if name == keys.DefaultBot {
		msg := settings.EnvTelegramToken + " (-telegram-bot-token) or " + settings.EnvTelegramTokenFile + " is required to run a worker"
		if several {
			msg += ": it holds the token of the bot \"" + name + "\" that " + settings.EnvBots + " lists"
		}
		return errors.New(msg)
	}
	return fmt.Errorf("%s or %s is required to run a worker: it holds the token of the bot %q that %s lists",
		settings.BotTokenEnv(name), settings.BotTokenFileEnv(name), name, settings.EnvBots)
}

// tokenSource names where the token of the bot called name was read from:
// its file variable and path, or its token variable.
func tokenSource(cfg settings.Worker, name string) string {
	if file := tokenFile(cfg, name); file != "" {
		return settings.BotTokenFileEnv(name) + " " + file
	}
	return settings.BotTokenEnv(name)
}

// NewWorker assembles a worker from its settings and the senders of its
// bots, by name (NewSenders).
func NewWorker(cfg settings.Worker, bots map[string]worker.Sender, reg prometheus.Registerer, log *slog.Logger) (*worker.Worker, error) {
	// Herald's own client: on a Cluster it reloads the slot map quickly
	// after a failover, and asynq's server runs on it too.
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{})
	if err != nil {
		return nil, err
	}
	// The settings are worker.Config's own; only the runtime parts are
	// added here.
	wc := cfg.Worker
	wc.Client, wc.Durable, wc.Bots = rdb, cfg.Redis.Durable(), bots
	wc.Logger, wc.Registerer = log, reg
	if wc.Events, err = statushook.NewEmitter(rdb, cfg.Callbacks); err != nil {
		rdb.Close()
		return nil, err
	}
	w, err := worker.New(wc)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	queues := make([]string, 0, len(cfg.Worker.Queues))
	for q := range cfg.Worker.Queues {
		queues = append(queues, q)
	}
	w.Metrics.InitQueues(queues)
	if err := attachPresses(w, cfg, bots, queues, reg, log); err != nil {
		w.Client().Close()
		return nil, err
	}
	if err := attachCallbacks(w, cfg, reg, log); err != nil {
		w.Client().Close()
		return nil, err
	}
	return w, nil
}

// attachCallbacks has the worker deliver the status callbacks
// (internal/statushook, docs/STATUS.md) beside its sends, on an asynq
// server and a Redis client of their own, when a master key is set.
func attachCallbacks(w *worker.Worker, cfg settings.Worker, reg prometheus.Registerer, log *slog.Logger) error {
	if !cfg.Callbacks.Enabled() {
		log.Info("status callbacks are off: " + statushook.EnvSecret + " is not set")
		return nil
	}
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{})
	if err != nil {
		return err
	}
	d, err := statushook.NewDeliverer(statushook.DelivererConfig{
		Client: rdb, Callbacks: cfg.Callbacks, ShutdownTimeout: cfg.Worker.ShutdownTimeout,
		MaxIdle: cfg.Worker.MaxIdle, LeaseRecoveryAfter: cfg.Worker.LeaseRecoveryAfter, Logger: log, Registerer: reg,
	})
	if err != nil {
		rdb.Close()
		return err
	}
	w.Attach(d)
	return nil
}

// attachPresses has the worker take the presses of alert buttons
// (internal/interact, docs/BUTTONS.md): it handles their tasks, and polls
// the bots' updates or, with HERALD_TELEGRAM_WEBHOOK_URL, sets their
// webhooks. HERALD_TELEGRAM_UPDATES=false leaves the updates alone.
func attachPresses(w *worker.Worker, cfg settings.Worker, bots map[string]worker.Sender, queues []string, reg prometheus.Registerer, log *slog.Logger) error {
	apis := interact.BotsOf(bots)
	if cfg.Updates.Off || len(apis) == 0 {
		return nil
	}
	secret, err := cfg.Updates.Value()
	if err != nil {
		return err
	}
	// Highest priority first: presses go to critical, else to the top queue.
	queues = slices.Clone(queues)
	slices.SortFunc(queues, func(a, b string) int { return cmp.Or(cfg.Worker.Queues[b]-cfg.Worker.Queues[a], strings.Compare(a, b)) })
	side, err := interact.ForWorker(interact.WorkerConfig{Redis: w.Client(), Bots: apis, Queues: queues,
		Durable: durable.New(w.Client(), cfg.Redis.Durable()), WebhookURL: cfg.Updates.WebhookURL, WebhookSecret: secret,
		Registerer: reg, Logger: log})
	if err != nil {
		return err
	}
	w.Handle(interact.TypeUpdate, side.Handler)
	w.Attach(side.Receiver)
	return nil
}

// RunWorker runs a worker (and its health/metrics server) until ctx ends.
func RunWorker(ctx context.Context, cfg settings.Worker, log *slog.Logger) error {
	bots, err := NewSenders(cfg)
	if err != nil {
		return err
	}
	if err := checkWorkerRedis(ctx, cfg); err != nil {
		return err
	}
	reg := NewRegistry()
	w, err := NewWorker(cfg, bots, reg, log)
	if err != nil {
		return err
	}
	log.Info("worker starting", "redis", cfg.Redis.Redacted(), "telegram_api", cfg.Telegram.Client.APIURL,
		"bots", cfg.BotNames(), "concurrency", cfg.Worker.Concurrency, "queues", cfg.Worker.Queues)
	metrics, err := workerMetricsHandler(cfg, reg)
	if err != nil {
		return err
	}
	httpCtx, stopHTTP := context.WithCancel(context.Background())
	defer stopHTTP()
	var wg sync.WaitGroup
	if cfg.Listen != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := w.HTTPHandler(metrics)
			if err := httpapi.ListenAndServe(httpCtx, cfg.Listen, h, log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("health/metrics server failed", "error", err)
			}
		}()
	}
	// A plain redis:// URL that lands on a replica (a demoted master) gets
	// one clear log line naming the fix.
	watchCtx, stopWatch := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		durable.Watch(watchCtx, w.Client(), roleWatchInterval, cfg.Redis.ReplicaHint(), log)
	}()
	err = w.Run(ctx)
	stopWatch()
	stopHTTP()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// checkWorkerRedis fails fast when Redis refuses the worker's credentials
// (checkRedisAuth), on a client of its own that it closes.
func checkWorkerRedis(ctx context.Context, cfg settings.Worker) error {
	opts, err := cfg.Redis.UniversalOptions()
	if err != nil {
		return err
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	return checkRedisAuth(ctx, rdb, cfg.Redis.Redacted())
}

// workerMetricsHandler serves reg, behind HERALD_WORKER_METRICS_TOKEN when
// that is set.
func workerMetricsHandler(cfg settings.Worker, reg *prometheus.Registry) (http.Handler, error) {
	token, err := cfg.Metrics()
	if err != nil {
		return nil, err
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if token != "" {
		h = httpapi.RequireToken(token, h)
	}
	return h, nil
}
