// Command herald runs all of Herald in one process for a first look: the
// producer API, the Asynq web UI, a worker, an in-memory Redis and — unless
// TELEGRAM_BOT_TOKEN is set — a fake Telegram Bot API. Nothing is persisted.
// HERALD_BOTS serves several bots (the fake serves them all; with real
// tokens each bot other than "default" takes HERALD_BOT_<NAME>_TOKEN).
// For production run cmd/producer and cmd/worker against a real Redis
// (docker compose up).
//
// It prints a REDIS_URL for `producer send` and more workers (the in-memory
// Redis speaks the Redis protocol on 127.0.0.1:6380). Stop it with Ctrl-C;
// started with `go run`, it also stops when the go command is killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	// Routes' quiet hours name IANA time zones; the database is embedded
	// so that they load on any machine.
	_ "time/tzdata"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/telegram"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address of the API and web UI")
	redisListen := flag.String("redis-listen", local.DefaultRedisListen, "address of the in-memory Redis, for `producer send` and more workers (port 0: any free port)")
	routes := flag.String("routes", "", "alert routing file (default: every alert to the demo chat 42)")
	flag.Parse()
	bots, err := settings.ParseBots(os.Getenv(settings.EnvBots))
	if err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(2)
	}
	opts := local.Options{
		Listen:         *listen,
		RedisListen:    *redisListen,
		RoutesFile:     *routes,
		Bots:           bots,
		TelegramToken:  os.Getenv(settings.EnvTelegramToken),
		BotTokens:      botTokens(bots, os.Getenv),
		TelegramAPIURL: os.Getenv(telegram.EnvAPIURL),
		Out:            os.Stdout,
		Getenv:         os.Getenv,
	}
	lc, err := local.LogSettings(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(2)
	}
	log := lc.NewLogger(os.Stderr)
	opts.Logger = log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = stopWithGoRun(ctx, func() { log.Info("the go command that started herald has exited; stopping") })
	err = local.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(1)
	}
}

// botTokens reads the real tokens of the bots other than "default" from
// their HERALD_BOT_<NAME>_TOKEN variables; unset ones are left out.
func botTokens(bots []string, getenv func(string) string) map[string]string {
	out := map[string]string{}
	for _, name := range bots {
		if name == keys.DefaultBot {
			continue
		}
		if tok := strings.TrimSpace(getenv(settings.BotTokenEnv(name))); tok != "" {
			out[name] = tok
		}
	}
	return out
}
