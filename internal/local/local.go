// Package local runs the whole of Herald in one process for trying it out:
// an in-memory Redis (miniredis), the producer API with the Asynq web UI, a
// worker, and — unless a real bot token is given — the fake Telegram Bot API.
// Nothing is persisted: stopping the process loses every queued message.
//
// Nothing asks for authentication either, so the API and the fake Bot API
// answer only requests whose Host is a loopback name or their listen
// address (httpapi.AllowHosts): a page of another site whose name was
// pointed at 127.0.0.1 (DNS rebinding) gets 421.
//
// Every setting of the producer and the worker is read from the
// environment (Options.Getenv) through the same specs as the binaries
// (settings.LoadProducer and settings.LoadWorker), so that a documented
// setting (a webhook secret, a limit, a routing file) works the same here.
// Local mode overrides only what it must, whatever the environment says:
//
//   - REDIS_URL is the in-memory Redis (Options.RedisListen).
//   - HERALD_LISTEN is Options.Listen (-listen; default 127.0.0.1:8080).
//   - HERALD_AUTH_DISABLED is true: the API is open, on loopback only
//     (see above); the API, admin and tokens-file tokens are not asked for.
//   - HERALD_METRICS_LISTEN is empty: /metrics is served on the API's
//     address, the one listener local mode opens.
//   - HERALD_WORKER_LISTEN is off: the worker's health and metrics server
//     stays off (the producer's /metrics covers the process).
//   - TELEGRAM_API_URL is the fake Bot API when no real token is given
//     (Options.TelegramToken, Options.BotTokens).
//   - HERALD_BOTS is Options.Bots when set.
//   - HERALD_ROUTES_FILE is Options.RoutesFile (-routes) when set; with
//     neither it nor HERALD_ALERTS_DEFAULT_CHAT, HERALD_ALERTS_DEFAULT_CHAT
//     is the demo chat 42.
//
// Two settings get defaults of local mode's own when the environment
// leaves them unset, so that status callbacks work out of the box:
//
//   - HERALD_CALLBACK_SECRET (unless HERALD_CALLBACK_SECRET_FILE is set)
//     is a master key made for the run: the producer and the worker in
//     this process share it, and nothing else needs it. It is printed
//     nowhere; the banner shows how to ask for an endpoint's secret.
//   - HERALD_CALLBACK_ALLOW is 127.0.0.1, ::1 and localhost, every port
//     of them: a receiver on this machine may be called, over plain http
//     too.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

// Options configure the local mode.
type Options struct {
	// Listen is the API and web UI address; default 127.0.0.1:8080.
	// Requests must name it, or a loopback name, as their Host
	// (httpapi.ListenHosts).
	Listen string
	// RedisListen is where the in-memory Redis serves the Redis protocol,
	// so that `producer send` and more workers can join; default
	// DefaultRedisListen. Port 0 picks a free port.
	RedisListen string
	// Bots are the bots to serve, by name (HERALD_BOTS); empty means the
	// bot "default" alone. The fake Bot API serves each with a token of
	// its own.
	Bots []string
	// TelegramToken, when set, sends to the real Bot API (TelegramAPIURL)
	// instead of the fake, as the bot "default".
	TelegramToken string
	// BotTokens are the real tokens of the other bots, by name
	// (HERALD_BOT_<NAME>_TOKEN). Given a real token, every bot of Bots
	// needs one.
	BotTokens      map[string]string
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
	// Getenv reads the producer's and the worker's settings (os.Getenv in
	// cmd/herald); nil reads none, leaving every setting at its default.
	// The package doc lists the settings local mode overrides.
	Getenv func(string) string

	// callbackKey is the callbacks' master key Run made for want of
	// HERALD_CALLBACK_SECRET (and its file).
	callbackKey string
}

// localCallbackAllow is HERALD_CALLBACK_ALLOW in local mode when unset.
const localCallbackAllow = "127.0.0.1:*,[::1]:*,localhost:*"

// Endpoints are the base URLs of a running local Herald.
type Endpoints struct {
	API string // producer API and web UI, e.g. http://127.0.0.1:8080
	// Redis is the in-memory Redis as a REDIS_URL, for `producer send` and
	// more workers, e.g. redis://127.0.0.1:6380/0.
	Redis string
	// FakeTelegram is the fake Bot API's base URL ("" with a real token);
	// its /fake/messages lists what was delivered.
	FakeTelegram string
}

// DefaultRedisListen is the in-memory Redis's default address: fixed, so
// that the README's `REDIS_URL=redis://127.0.0.1:6380/0 producer send`
// works as written, and not 6379, where a real Redis may run.
const DefaultRedisListen = "127.0.0.1:6380"

// demoChat receives every alert when no routing file is given.
const demoChat = "42"

// Run starts everything and blocks until ctx ends.
func Run(ctx context.Context, o Options) error {
	o = o.withDefaults()
	log := o.Logger
	if err := o.checkBots(); err != nil {
		return err
	}
	o, err := o.withTokens()
	if err != nil {
		return err
	}
	if o.callbackKey, err = o.makeCallbackKey(); err != nil {
		return err
	}

	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr(o.RedisListen); err != nil {
		return fmt.Errorf("local: start the in-memory Redis on %s: %w (is another herald running? stop it with Ctrl-C, or pass -redis-listen 127.0.0.1:0 for any free port)", o.RedisListen, err)
	}
	defer mr.Close()
	redisURL := "redis://" + mr.Addr() + "/0"

	tg, err := startTelegram(o)
	if err != nil {
		return err
	}
	if tg.fake != nil {
		defer tg.fake.Close()
	}

	pcfg, wcfg, err := Configs(o, redisURL, tg.apiURL)
	if err != nil {
		return err
	}
	senders := make(map[string]worker.Sender, len(o.Bots))
	for _, name := range o.Bots {
		c, err := telegram.New(telegram.Config{Token: tg.tokens[name], APIURL: tg.apiURL})
		if err != nil {
			return fmt.Errorf("local: bot %q: %w", name, err)
		}
		senders[name] = c
	}
	reg := app.NewRegistry()
	w, err := app.NewWorker(wcfg, senders, reg, log)
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
	// Without authentication the producer's handler checks the Host
	// header (app.NewProducer): that keeps pages of other sites out (DNS
	// rebinding).
	h := prod.Handler()

	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("local: listen on %s: %w (is another herald running? stop it with Ctrl-C, or pass -listen 127.0.0.1:0 for any free port)", o.Listen, err)
	}
	base := baseURL(ln.Addr())
	srv := httpapi.NewServer(h, o.Logger)

	return serve(ctx, srv, ln, w.Run, func() {
		announce(o, banner{api: base, monitoring: pcfg.Server.MonitoringPath, redis: redisURL,
			fake: tg.fakeURL(), apiURL: tg.apiURL, routes: pcfg.Routes.File, bots: o.Bots, tokens: tg.tokens})
	})
}

// withDefaults fills in the options left empty.
func (o Options) withDefaults() Options {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:8080"
	}
	if o.RedisListen == "" {
		o.RedisListen = DefaultRedisListen
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if len(o.Bots) == 0 {
		o.Bots = []string{keys.DefaultBot}
	}
	return o
}

// checkBots refuses bot names the binaries would refuse, and a demo route
// (no routing file) that could not send: it sends as the default bot.
func (o Options) checkBots() error {
	bots, err := settings.ParseBots(strings.Join(o.Bots, ","))
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	if o.demoRoute() && !slices.Contains(bots, keys.DefaultBot) {
		return fmt.Errorf("local: without -routes every alert goes to the demo chat as the bot %q, which %s (%s) leaves out; "+
			"add it there, or pass -routes with routes that name their bot", keys.DefaultBot, settings.EnvBots, strings.Join(bots, ", "))
	}
	return nil
}

// withTokens returns o with the bots' tokens read from the worker's
// settings (TELEGRAM_BOT_TOKEN and HERALD_BOT_<NAME>_TOKEN, or their _FILE
// variants) when o gives none.
func (o Options) withTokens() (Options, error) {
	if o.TelegramToken != "" || len(o.BotTokens) > 0 || o.Getenv == nil {
		return o, nil
	}
	_, w, err := Configs(o, "redis://"+DefaultRedisListen+"/0", "")
	if err != nil {
		return o, err
	}
	tokens := map[string]string{}
	for _, name := range o.Bots {
		tok, err := w.BotToken(name)
		switch {
		case err != nil:
			return o, fmt.Errorf("local: %w", err)
		case name == keys.DefaultBot:
			o.TelegramToken = tok
		case tok != "":
			tokens[name] = tok
		}
	}
	o.BotTokens = tokens
	return o, nil
}

// telegramAPI is the Bot API the worker sends to.
type telegramAPI struct {
	apiURL string
	// tokens are the bots' tokens by name.
	tokens map[string]string
	// fake is the fake Bot API started for want of a real token; nil
	// otherwise. The caller closes it.
	fake *fakeAPI
}

// fakeURL is the fake Bot API's base URL, "" with a real token.
func (t telegramAPI) fakeURL() string {
	if t.fake == nil {
		return ""
	}
	return t.fake.URL()
}

// fakeToken is the fake Bot API's token of the i-th bot of Options.Bots:
// DefaultToken for the default bot, and for any other a token of its own
// with an id of its own (the digits before the colon), as Telegram's are.
func fakeToken(i int, name string) string {
	if name == keys.DefaultBot {
		return telegramfake.DefaultToken
	}
	return fmt.Sprintf("%d:fake-telegram-token-%s", 100000002+i, name)
}

// startTelegram picks the real Bot API when o has a token, and starts the
// fake one otherwise, serving every bot of o, so that trying Herald out
// needs no bot.
func startTelegram(o Options) (telegramAPI, error) {
	t := telegramAPI{apiURL: o.TelegramAPIURL, tokens: make(map[string]string, len(o.Bots))}
	if o.TelegramToken != "" || len(o.BotTokens) > 0 {
		var missing []string
		for _, name := range o.Bots {
			tok := o.BotTokens[name]
			if name == keys.DefaultBot {
				tok = o.TelegramToken
			}
			if tok == "" {
				missing = append(missing, settings.BotTokenEnv(name))
			}
			t.tokens[name] = tok
		}
		if len(missing) > 0 {
			return telegramAPI{}, fmt.Errorf("local: with a real bot token every bot needs one: set %s, or unset the tokens to use the fake Bot API",
				strings.Join(missing, ", "))
		}
	} else {
		fc := telegramfake.Config{Logger: o.Logger, Tokens: map[string]string{}}
		for i, name := range o.Bots {
			t.tokens[name] = fakeToken(i, name)
			if name == keys.DefaultBot {
				fc.Token = t.tokens[name]
			} else {
				fc.Tokens[name] = t.tokens[name]
			}
		}
		fake, err := startFake(fc, o.Logger)
		if err != nil {
			return telegramAPI{}, err
		}
		t.fake = fake
		t.apiURL = fake.URL()
	}
	if t.apiURL == "" {
		t.apiURL = telegram.DefaultAPIURL
	}
	return t, nil
}

// baseURL is the URL of the API listening on addr; on 127.0.0.1 when it
// listens on every interface, as [::] is no address to open.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Configs are the producer's and the worker's configuration in local mode
// on the in-memory Redis at redisURL, sending to the Bot API at apiURL:
// every setting read from o.Getenv through the binaries' specs, but for
// the overrides of the package doc.
func Configs(o Options, redisURL, apiURL string) (settings.Producer, settings.Worker, error) {
	o = o.withDefaults()
	getenv := o.environment(redisURL, apiURL)
	pcfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		return settings.Producer{}, settings.Worker{}, fmt.Errorf("local: %w", err)
	}
	wcfg, err := settings.LoadWorker(nil, getenv)
	if err != nil {
		return settings.Producer{}, settings.Worker{}, fmt.Errorf("local: %w", err)
	}
	return pcfg, wcfg, nil
}

// LogSettings are the log level and format o's settings ask for (LOG_LEVEL,
// LOG_FORMAT), for the logger to pass to Run; the error is any setting's
// that Run would refuse too.
func LogSettings(o Options) (config.Log, error) {
	p, _, err := Configs(o, "redis://"+DefaultRedisListen+"/0", "")
	return p.Log, err
}

// Overridden lists the settings local mode sets itself (the package doc
// says why), whatever the environment says.
var Overridden = []string{
	redisconn.EnvURL, producer.EnvListen, httpapi.EnvAuthDisabled, producer.EnvMetricsListen,
	settings.EnvWorkerListen, telegram.EnvAPIURL, settings.EnvBots,
}

// demoRoute reports whether every alert goes to the demo chat: no routing
// file is given (-routes, HERALD_ROUTES_FILE) and no default chat.
func (o Options) demoRoute() bool {
	if o.RoutesFile != "" || o.Getenv == nil {
		return o.RoutesFile == ""
	}
	return o.Getenv(alerts.EnvRoutesFile) == "" && o.Getenv(alerts.EnvDefaultChat) == ""
}

// environment is o.Getenv with local mode's overrides.
func (o Options) environment(redisURL, apiURL string) func(string) string {
	over := map[string]string{
		redisconn.EnvURL:          redisURL,
		producer.EnvListen:        o.Listen,
		httpapi.EnvAuthDisabled:   "true",
		producer.EnvMetricsListen: "",
		settings.EnvWorkerListen:  config.OffWord,
		telegram.EnvAPIURL:        apiURL,
		settings.EnvBots:          strings.Join(o.Bots, ","),
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if o.callbackKey != "" && getenv(statushook.EnvSecret) == "" && getenv(statushook.EnvSecretFile) == "" {
		over[statushook.EnvSecret] = o.callbackKey
	}
	if getenv(statushook.EnvAllow) == "" {
		over[statushook.EnvAllow] = localCallbackAllow
	}
	if o.RoutesFile != "" {
		over[alerts.EnvRoutesFile] = o.RoutesFile
	} else if o.demoRoute() {
		over[alerts.EnvDefaultChat] = demoChat
	}
	return func(name string) string {
		if v, ok := over[name]; ok {
			return v
		}
		return getenv(name)
	}
}

// makeCallbackKey returns a fresh master key for the callbacks when the
// environment names none, "" when it does.
func (o Options) makeCallbackKey() (string, error) {
	if o.Getenv != nil && (o.Getenv(statushook.EnvSecret) != "" || o.Getenv(statushook.EnvSecretFile) != "") {
		return "", nil
	}
	key, err := statushook.NewSecret()
	if err != nil {
		return "", fmt.Errorf("local: %w", err)
	}
	return key, nil
}

// announce prints the banner and tells o.Ready where everything runs.
func announce(o Options, b banner) {
	printBanner(o.Out, b)
	if o.Ready != nil {
		o.Ready(Endpoints{API: b.api, Redis: b.redis, FakeTelegram: b.fake})
	}
}

// serve runs the API server on ln and the worker, calls started once both
// are on their way, and returns when ctx ends or either fails, after
// stopping both.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, runWorker func(context.Context) error, started func()) error {
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
	go func() { defer wg.Done(); errc <- runWorker(runCtx) }()
	started()

	var err error
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
