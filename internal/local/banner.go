package local

import (
	"fmt"
	"io"
	"strings"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/settings"
)

// banner is what the local mode prints once it runs.
type banner struct {
	api, monitoring, redis string
	fake                   string // the fake Bot API's URL; "" with a real bot token
	apiURL                 string // Bot API in use
	routes                 string
	bots                   []string          // the bots served, in order
	tokens                 map[string]string // their tokens: printed only for the fake
}

// printBanner prints the URLs and commands to try, each ready to paste: the
// in-memory Redis's REDIS_URL serves `producer send` and more workers.
func printBanner(out io.Writer, b banner) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("Herald is running locally (everything in memory: NOTHING IS PERSISTED).")
	p("  API:      POST %s/v1/messages   (no auth in local mode)", b.api)
	p("  Web UI:   %s%s/", b.api, b.monitoring)
	p("  Metrics:  %s/metrics", b.api)
	p("  Redis:    REDIS_URL=%s   (in memory, for the CLI and more workers)", b.redis)
	if b.fake != "" {
		p("  Telegram: fake Bot API at %s; delivered messages: %s/fake/messages", b.fake, b.fake)
	} else {
		p("  Telegram: %s (real bot token)", b.apiURL)
	}
	several := len(b.bots) > 1 || len(b.bots) == 1 && b.bots[0] != keys.DefaultBot
	if several {
		p("  Bots:     %s (a message names its bot: \"bot\":\"%s\")", strings.Join(b.bots, ", "), b.bots[len(b.bots)-1])
	}
	// The second worker's token settings: the fake's tokens are no
	// secret; a real one is left to the shell.
	var tokens []string
	if several {
		tokens = append(tokens, settings.EnvBots+"="+strings.Join(b.bots, ","))
	}
	for _, name := range b.bots {
		env := settings.BotTokenEnv(name)
		tok := `"$` + env + `"`
		if b.fake != "" {
			tok = b.tokens[name]
		}
		tokens = append(tokens, env+"="+tok)
	}
	p("Try:")
	p(`  curl -s -X POST %s/v1/messages -H 'Content-Type: application/json' -d '{"chat":42,"text":"hello from Herald"}'`, b.api)
	p(`  curl -s -X POST %s/v1/alerts -H 'Content-Type: application/json' -d '{"title":"Disk almost full","severity":"warning"}'`, b.api)
	p(`  curl -s -X PUT '%s/v1/heartbeats/nightly-backup?interval=1m'`, b.api)
	p(`  REDIS_URL=%s go run ./cmd/producer send --chat 42 "hello from the CLI"`, b.redis)
	p("A second worker on the same queues:")
	p(`  REDIS_URL=%s TELEGRAM_API_URL=%s %s HERALD_WORKER_LISTEN=off go run ./cmd/worker`, b.redis, b.apiURL, strings.Join(tokens, " "))
	p("Status callbacks (a message's \"callback_url\"; receivers on this machine are allowed): a receiver's signing secret:")
	p(`  curl -s '%s/v1/callbacks/endpoint?url=http://127.0.0.1:9000/hook'`, b.api)
	if b.routes == "" {
		p("Alerts, heartbeats and webhooks go to chat %s (pass -routes FILE for a routing file).", demoChat)
	}
	p("Stop with Ctrl-C (everything queued is lost).")
}
