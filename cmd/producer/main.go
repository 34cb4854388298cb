// Command producer accepts messages for Telegram and stores them as tasks in
// Redis. `producer` (or `producer serve`) runs the HTTP API and the web UI,
// `producer send --chat ID "text"` enqueues one message from the shell,
// `producer broadcast --chats-file FILE "text"` one message to each chat of
// a list (and `producer broadcast status|cancel ID` reads or cancels it),
// `producer status ID`, `producer cancel ID` and `producer retry ID` read
// and act on the message ledger, `producer chat BOT CHAT` shows whether a chat blocked a bot and
// `producer unblock BOT CHAT` clears that mark,
// `producer feeds --config feeds.yaml` polls RSS and Atom feeds, and
// `producer healthcheck` probes a running API (for container health checks),
// and `producer check` validates the settings, secrets and files without serving.
// Configuration comes from the environment, overridden by flags; run
// `producer -h` for the list.
//
// Exit codes: 0 success; 1 failure at run time (for send: not stored, Redis
// unreachable, safe to retry); 2 bad usage or configuration (for send: an
// invalid message).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// Routes' quiet hours name IANA time zones; the database is embedded
	// so that an image without /usr/share/zoneinfo can load them.
	_ "time/tzdata"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
)

func main() { os.Exit(run()) }

func run() int {
	cfg, rest, err := settings.LoadProducerArgs(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "usage: producer [flags] [serve | send --chat ID \"text\" | broadcast --chats-file FILE \"text\" | status ID | cancel ID | retry ID | chat BOT CHAT | unblock BOT CHAT | feeds --config feeds.yaml | healthcheck | check]")
		fmt.Fprintln(os.Stderr, "exit codes: 0 success, 1 failure at run time (send: not stored, safe to retry), 2 bad usage or configuration")
		_ = settings.ProducerUsage(os.Stderr)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		return 2
	}
	log := cfg.Log.NewLogger(os.Stderr)
	// go-redis logs pool errors on its own; the commands report failures
	// themselves, so its lines go to debug level.
	redis.SetLogger(redisLogger{log: log})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := "serve"
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "serve":
		if err := cfg.ValidateServe(); err != nil {
			fmt.Fprintln(os.Stderr, "producer:", err)
			return 2
		}
		if err := app.RunProducer(ctx, cfg, log); err != nil {
			log.Error("producer stopped", "error", err)
			return 1
		}
		return 0
	case "send", "chat", "unblock", "status", "cancel", "retry", "broadcast":
		return direct(ctx, cfg, cmd, rest)
	case "feeds":
		fs := flag.NewFlagSet("producer feeds", flag.ContinueOnError)
		path := fs.String("config", "", "feed list (YAML); default "+feeds.EnvFile)
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if err := app.RunFeeds(ctx, cfg, *path, log); err != nil {
			log.Error("feed poller stopped", "error", err)
			return 1
		}
		return 0
	case "healthcheck":
		return app.Healthcheck(ctx, cfg.Server.Listen, os.Stderr)
	case "check":
		// The init step of docker-compose.yml: settings, secrets and the
		// files serve and `producer feeds` load, without serving.
		if err := app.CheckProducer(cfg, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "producer check:", err)
			return 2
		}
		fmt.Fprintln(os.Stderr, "producer check: configuration OK")
		return 0
	default:
		fmt.Fprintf(os.Stderr, "producer: unknown command %q (want serve, send, broadcast, status, cancel, retry, chat, unblock, feeds, healthcheck or check)\n", cmd)
		return 2
	}
}

// direct runs the commands that work on Redis themselves, as an operator.
func direct(ctx context.Context, cfg settings.Producer, cmd string, rest []string) int {
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "producer %s: %v\n", cmd, err)
		return producer.ExitUsage
	}
	defer rdb.Close()
	switch cmd {
	case "send":
		enq := app.NewEnqueuer(rdb, cfg)
		defer enq.Close()
		return producer.Send(ctx, enq, rest, os.Stdin, os.Stdout, os.Stderr)
	case "chat", "unblock":
		return producer.ChatCommand(ctx, cmd, chats.NewStore(rdb), cfg.BotNames(), rest, os.Stdout, os.Stderr)
	case "broadcast":
		enq := app.NewEnqueuer(rdb, cfg)
		defer enq.Close()
		svc := broadcast.New(rdb, enq, chats.NewStore(rdb), ledger.NewStore(rdb, cfg.Ledger), cfg.Broadcast)
		return producer.BroadcastCommand(ctx, svc, enq, rest, os.Stdin, os.Stdout, os.Stderr)
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	msgs := ledger.NewMessages(ledger.NewStore(rdb, cfg.Ledger), insp, cfg.Enqueue.Queues, cfg.BotNames())
	return producer.MessageCommand(ctx, cmd, msgs, rest, os.Stdout, os.Stderr)
}
