// Command worker sends the queued messages to Telegram, holding Telegram's
// rate limits across every worker process sharing the Redis. Run as many
// replicas as you like; `worker healthcheck` probes a running worker, and
// `worker check` validates the settings and the bot token without running.
// Configuration comes from the environment, overridden by flags; run
// `worker -h` for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/settings"
)

func main() { os.Exit(run()) }

func run() int {
	cfg, rest, err := settings.LoadWorkerArgs(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "usage: worker [flags] [healthcheck | check]")
		_ = settings.WorkerUsage(os.Stderr)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	log := cfg.Log.NewLogger(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(rest) > 0 && rest[0] == "healthcheck" {
		return app.Healthcheck(ctx, cfg.Listen, os.Stderr)
	}
	if len(rest) > 0 && rest[0] == "check" {
		// The init step of docker-compose.yml: settings and secrets only.
		if err := app.CheckWorker(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "worker check:", err)
			return 2
		}
		fmt.Fprintln(os.Stderr, "worker check: configuration OK")
		return 0
	}
	if len(rest) > 0 {
		fmt.Fprintf(os.Stderr, "worker: unknown command %q (want no command, healthcheck or check)\n", rest[0])
		return 2
	}
	if err := app.RunWorker(ctx, cfg, log); err != nil {
		log.Error("worker stopped", "error", err)
		return 1
	}
	return 0
}
