package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/botapi"
	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/heartbeat"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/inbound"
	"github.com/herald-dev/herald/internal/interact"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/silences"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/webhooks"
)

// NewEnqueuer builds the enqueue side from the producer's settings, its
// Settle waiting for the replicas HERALD_REDIS_WAIT_REPLICAS asks for. It
// refuses a message naming a bot HERALD_BOTS does not list, and one naming
// none when that list leaves out the default bot.
func NewEnqueuer(rdb redis.UniversalClient, cfg settings.Producer) *jobs.Enqueuer {
	ec := cfg.EnqueueConfig()
	ec.Durable = durable.New(rdb, cfg.Redis.Durable())
	return jobs.NewEnqueuer(rdb, ec)
}

// writableCheck is /readyz's Redis check: the server Herald writes to
// answers and is a master. A replica's error names the fix (hint).
func writableCheck(rdb redis.UniversalClient, hint string) func(context.Context) error {
	return func(ctx context.Context) error {
		err := durable.CheckPrimary(ctx, rdb)
		var np *durable.NotPrimaryError
		if errors.As(err, &np) {
			return fmt.Errorf("%w: %s", err, hint)
		}
		return err
	}
}

// roleWatchInterval is how often a running producer, worker or feed poller
// checks that Redis is still a master (one ROLE), to log the fix within
// seconds.
const roleWatchInterval = 5 * time.Second

// Version is Herald's release version as herald_build_info reports it. The
// release build sets it with
// -ldflags "-X github.com/herald-dev/herald/internal/app.Version=v1.2.3";
// when empty, the main module's version from the Go build info is used.
var Version string

// NewRegistry returns a Prometheus registry with the Go runtime and process
// collectors and herald_build_info.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(),
	)
	return reg
}

// buildInfo is the herald_build_info gauge: always 1, with the version and
// the Go version as labels, to join on or to spot mixed versions in a fleet.
func buildInfo() prometheus.Gauge {
	version := Version
	if version == "" {
		version = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			version = bi.Main.Version
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "herald_build_info",
		Help:        "Always 1; the labels name the Herald version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// Producer is an assembled producer: the HTTP API (messages, alerts,
// heartbeats, webhooks, web UI, metrics) and its background heartbeat
// checker.
type Producer struct {
	handler http.Handler
	// metrics is /metrics when it is served on a listener of its own
	// (HERALD_METRICS_LISTEN); nil when the API serves it.
	metrics    http.Handler
	router     *alerts.Router
	checker    *heartbeat.Checker
	oncall     *onCall
	silences   *silences.Store
	routesFile string
	log        *slog.Logger
	cleanup    func()
	// quotas' reserve samples Redis' memory from Start to Close.
	quotas      *quota.Store
	stopReserve func()
}

// NewProducer builds the producer on rdb. connOpt reaches the same Redis for
// the web UI and asynq's queue metrics. Start runs the heartbeat checker;
// Close releases everything.
func NewProducer(cfg settings.Producer, rdb redis.UniversalClient, connOpt asynq.RedisConnOpt, reg *prometheus.Registry, log *slog.Logger) (*Producer, error) {
	sec, err := readProducerSecrets(cfg)
	if err != nil {
		return nil, err
	}
	enq := NewEnqueuer(rdb, cfg)
	st, err := NewSilences(cfg, rdb, enq, log)
	if err != nil {
		return nil, err
	}
	dispatcher, router, err := NewRouter(cfg, rdb, enq, st, log)
	if err != nil {
		return nil, err
	}
	insp, err := registerQueueMetrics(cfg, connOpt, reg, log)
	if err != nil {
		return nil, err
	}
	ui, uiAdmin := newMonitoringUIs(cfg, connOpt, sec.keyring)
	cleanup := func() {
		_ = enq.Close()
		for _, h := range []*asynqmon.HTTPHandler{ui, uiAdmin} {
			if h != nil {
				_ = h.Close()
			}
		}
		_ = insp.Close()
	}
	fail := func(err error) (*Producer, error) { cleanup(); return nil, err }

	hbMounts, checker, err := newHeartbeats(cfg, rdb, dispatcher, log)
	if err != nil {
		return fail(err)
	}
	// The status callbacks' side of the producer: it checks a message's
	// callback_url (Emitter.CheckURL) and serves the endpoints' state.
	events, err := statushook.NewEmitter(rdb, cfg.Callbacks)
	if err != nil {
		return fail(err)
	}
	oc, err := newOnCall(cfg, rdb, enq, router, st, reg, log)
	if err != nil {
		return fail(err)
	}
	quotas := quota.NewStore(rdb, quota.NewMetrics(reg)).WithReserve(quota.NewReserve(rdb, cfg.Reserve, log))
	s := surfaces{cfg: cfg, rdb: rdb, reg: reg, log: log, sec: sec, enq: enq, dispatcher: dispatcher, router: router, silences: st, events: events, quotas: quotas}
	mounts, err := s.mounts(hbMounts, oc)
	if err != nil {
		return fail(err)
	}
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if sec.metrics != "" {
		metricsHandler = httpapi.RequireToken(sec.metrics, metricsHandler)
	}
	apiCfg := producer.Config{
		Enqueuer: enq, Redis: rdb, Ready: writableCheck(rdb, cfg.Redis.ReplicaHint()), Keyring: sec.keyring,
		MaxBodyBytes: cfg.Server.MaxBodyBytes, Logger: log, Registerer: reg,
		Metrics: metricsHandler, Mounts: mounts,
		Messages:  ledger.NewMessages(ledger.NewStore(rdb, cfg.Ledger), insp, cfg.Enqueue.Queues, cfg.BotNames()),
		Callbacks: events, Quotas: quotas,
	}
	var ownMetrics http.Handler
	if cfg.Server.MetricsListen != "" {
		ownMetrics = metricsOnly(metricsHandler)
		apiCfg.Metrics = nil
	}
	if ui != nil {
		apiCfg.Monitoring, apiCfg.MonitoringPath = ui, cfg.Server.MonitoringPath
		if uiAdmin != nil {
			apiCfg.MonitoringAdmin = uiAdmin
		}
	}
	api, err := producer.NewAPI(apiCfg)
	if err != nil {
		return fail(err)
	}
	return &Producer{handler: guardHosts(api.Handler(), sec.keyring, cfg.Server.Listen, log), metrics: ownMetrics, router: router, checker: checker, oncall: oc, silences: st, routesFile: cfg.Routes.File,
		log: log, cleanup: cleanup, quotas: quotas}, nil
}

// surfaces are what the API's endpoints beyond /v1/messages are built on.
type surfaces struct {
	cfg        settings.Producer
	rdb        redis.UniversalClient
	reg        prometheus.Registerer
	log        *slog.Logger
	sec        producerSecrets
	enq        *jobs.Enqueuer
	dispatcher alerts.Dispatcher
	router     *alerts.Router
	silences   *silences.Store
	events     *statushook.Emitter
	quotas     *quota.Store
}

// mounts lists the API's endpoints beyond /v1/messages. Each domain
// package exports its routes with the scope each takes (httpapi.Mount; see
// internal/httpapi's doc): adding a surface is one line here. hb are the
// heartbeats' routes and oc the on-call side, built with their loops.
func (s surfaces) mounts(hb []httpapi.Mount, oc *onCall) ([]httpapi.Mount, error) {
	cfg, log := s.cfg, s.log
	hooks, err := webhooks.Mounts(s.webhooks())
	if err != nil {
		return nil, err
	}
	tg, err := s.telegram()
	if err != nil {
		return nil, err
	}
	blocked := chats.NewStore(s.rdb, chats.WithMetrics(chats.NewMetrics(s.reg)))
	casts := broadcast.New(s.rdb, s.enq, chats.NewStore(s.rdb), ledger.NewStore(s.rdb, cfg.Ledger), cfg.Broadcast)
	return slices.Concat(
		withQuota(alerts.Mounts(s.dispatcher, cfg.Server.MaxBodyBytes, log), quota.NameAlertsPerMinute),
		hb,
		s.silences.Mounts(),
		hooks,
		tg,
		chats.Mounts(blocked, cfg.BotNames(), log),
		s.events.Mounts(),
		broadcast.Mounts(casts, s.events, log, s.quotas),
		oc.mounts,
		inbound.Mounts(inbound.Config{Dispatcher: s.dispatcher, Keyring: s.sec.keyring, Redis: s.rdb, MaxBodyBytes: cfg.WebhookBodyLimit(), Logger: log,
			Acknowledge: interact.NewSourceAcks(interact.SourceAckConfig{Redis: s.rdb, Edits: s.enq, Escalations: escalation.NewStore(s.rdb, nil), Bots: cfg.BotNames(), Logger: log}).Acknowledge}),
		botapi.Mounts(botapi.Config{Enqueuer: s.enq, Keyring: s.sec.keyring, Ledger: ledger.NewStore(s.rdb, cfg.Ledger), Bots: cfg.BotNames(), MaxBodyBytes: cfg.Server.MaxBodyBytes, Logger: log, Registerer: s.reg}),
	), nil
}

// withQuota has every POST of ms take one of the rate quota name from its
// token (httpapi.Mount.Quota).
func withQuota(ms []httpapi.Mount, name string) []httpapi.Mount {
	for i := range ms {
		ms[i].Quota = name
	}
	return ms
}

// telegram is the receiver of Telegram's posts of button presses, when
// the webhook's secret is set.
func (s surfaces) telegram() ([]httpapi.Mount, error) {
	tg, err := s.cfg.Telegram.Value()
	if err != nil {
		return nil, err
	}
	return interact.Mounts(interact.ProducerConfig{Redis: s.rdb, Queues: s.cfg.Enqueue.Queues, DefaultQueue: s.cfg.Enqueue.DefaultQueue,
		Secret: tg, Bots: s.cfg.BotNames(), MaxBodyBytes: s.cfg.WebhookBodyLimit(), Registerer: s.reg, Logger: s.log})
}

// webhooks configures the webhook receivers (Grafana, GitHub, Sentry and,
// with a routing file, the generic one).
func (s surfaces) webhooks() webhooks.Config {
	whCfg := s.cfg.Webhooks
	whCfg.Dispatcher, whCfg.Keyring, whCfg.Logger = s.dispatcher, s.sec.keyring, s.log
	whCfg.MaxBodyBytes = s.cfg.WebhookBodyLimit()
	if s.router != nil {
		whCfg.Generic = webhooks.GenericFromRouter(s.router)
	}
	return whCfg
}

// guardHosts is the API's handler as served. Without authentication only a
// request addressed to this server by its own name may act: a page whose
// DNS name was pointed at it (DNS rebinding) gets a 421. With it, the
// tokens' names are logged once.
func guardHosts(h http.Handler, k *httpapi.Keyring, listen string, log *slog.Logger) http.Handler {
	if !k.Open() {
		log.Info("API tokens", "names", k.Names())
		return h
	}
	return httpapi.AllowHosts(httpapi.ListenHosts(listen), h)
}

// producerSecrets are the producer's credentials, read from its settings
// (or the files they name) once at start-up. The webhook receivers read
// their own secrets (webhooks.Handler).
type producerSecrets struct {
	keyring *httpapi.Keyring
	metrics string
}

// readProducerSecrets reads the API's tokens and the metrics token, in
// that order, stopping at the first error.
func readProducerSecrets(cfg settings.Producer) (producerSecrets, error) {
	var s producerSecrets
	var err error
	if s.keyring, err = cfg.Keyring.Build(); err != nil {
		return producerSecrets{}, err
	}
	if s.metrics, err = cfg.Server.Metrics(); err != nil {
		return producerSecrets{}, err
	}
	return s, nil
}

// registerQueueMetrics registers asynq's queue metrics on reg, cached for
// HERALD_METRICS_CACHE. They come from an Inspector with its own connection
// pool on the same Redis, which the caller closes.
func registerQueueMetrics(cfg settings.Producer, connOpt asynq.RedisConnOpt, reg prometheus.Registerer, log *slog.Logger) (*asynq.Inspector, error) {
	insp := asynq.NewInspector(connOpt)
	var queues prometheus.Collector = newQueueCollector(insp, log)
	if cfg.Server.MetricsCache > 0 {
		queues = newCachedCollector(queues, cfg.Server.MetricsCache)
	}
	if err := reg.Register(queues); err != nil {
		_ = insp.Close()
		return nil, fmt.Errorf("register asynq queue metrics: %w", err)
	}
	return insp, nil
}

// newMonitoringUIs builds the web UI, which comes twice: read-only for
// every token (senders' too), read-write for tokens with the admin scope
// (or for everyone without authentication, in local mode). Each keeps its
// own lazily dialled connection pool. Both are nil without a monitoring
// path, uiAdmin also when the UI is read-only or no token may administer it.
func newMonitoringUIs(cfg settings.Producer, connOpt asynq.RedisConnOpt, k *httpapi.Keyring) (ui, uiAdmin *asynqmon.HTTPHandler) {
	if cfg.Server.MonitoringPath == "" {
		return nil, nil
	}
	ui = asynqmon.New(asynqmon.Options{
		RootPath:         cfg.Server.MonitoringPath,
		RedisConnOpt:     connOpt,
		PayloadFormatter: PayloadFormatter,
		ReadOnly:         true,
	})
	if !cfg.Server.MonitoringReadOnly && k.Grants(httpapi.ScopeAdmin) {
		uiAdmin = asynqmon.New(asynqmon.Options{
			RootPath:         cfg.Server.MonitoringPath,
			RedisConnOpt:     connOpt,
			PayloadFormatter: PayloadFormatter,
		})
	}
	return ui, uiAdmin
}

// newHeartbeats builds the heartbeat API's routes and the checker that
// alerts on overdue heartbeats through dispatcher.
func newHeartbeats(cfg settings.Producer, rdb redis.UniversalClient, dispatcher alerts.Dispatcher, log *slog.Logger) ([]httpapi.Mount, *heartbeat.Checker, error) {
	hbCfg := cfg.Heartbeat
	hbCfg.Redis, hbCfg.Dispatcher, hbCfg.Logger = rdb, dispatcher, log
	hbCfg.MaxBodyBytes = cfg.Server.MaxBodyBytes
	mounts, err := heartbeat.Mounts(hbCfg)
	if err != nil {
		return nil, nil, err
	}
	checker, err := heartbeat.NewChecker(hbCfg)
	if err != nil {
		return nil, nil, err
	}
	return mounts, checker, nil
}

// Handler returns the HTTP API.
func (p *Producer) Handler() http.Handler { return p.handler }

// MetricsHandler returns the handler of the metrics listener
// (HERALD_METRICS_LISTEN), or nil when the API serves /metrics.
func (p *Producer) MetricsHandler() http.Handler { return p.metrics }

// metricsOnly serves h at GET /metrics and a JSON 404 elsewhere.
func metricsOnly(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "this listener serves only GET /metrics"))
	})
	return mux
}

// Start runs the heartbeat checker, the releaser of quiet hours (which
// also removes old silences), the escalation engine and the handoff
// announcer until Close.
func (p *Producer) Start(ctx context.Context) error {
	p.stopReserve = p.quotas.StartReserve(ctx)
	if err := p.checker.Start(ctx); err != nil {
		return err
	}
	if err := p.silences.Start(ctx); err != nil {
		return err
	}
	return p.oncall.Start(ctx)
}

// Reload re-reads the routing file; on error the routes in use stay.
func (p *Producer) Reload() error { return reloadRoutes(p.router, p.routesFile) }

// reloadRoutes re-reads the routing file into r; without a file (or a
// router) there is nothing to reload.
func reloadRoutes(r *alerts.Router, file string) error {
	if r == nil || file == "" {
		return fmt.Errorf("no routing file to reload: set %s", alerts.EnvRoutesFile)
	}
	return r.Reload(file)
}

// Close stops the checker and the releaser (waiting for a pass in
// progress) and releases the producer's connections other than rdb.
func (p *Producer) Close() {
	if p.stopReserve != nil {
		p.stopReserve()
	}
	p.checker.Shutdown()
	p.oncall.Shutdown()
	p.silences.Shutdown()
	p.cleanup()
}

// reloadOnHUP calls reload at every SIGHUP until ctx ends or the returned
// stop is called, logging the outcome: a failed reload keeps the routes in
// use.
func reloadOnHUP(ctx context.Context, log *slog.Logger, file string, reload func() error) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-hup:
				if err := reload(); err != nil {
					log.Error("routing file not reloaded; the previous routes stay in use", "error", err)
				} else {
					log.Info("routing file reloaded", "file", file)
				}
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// ProducerHandler builds the API without starting the heartbeat checker,
// for tests and embedders that only need the HTTP side. The returned
// cleanup closes what it opened.
func ProducerHandler(cfg settings.Producer, rdb redis.UniversalClient, connOpt asynq.RedisConnOpt, reg *prometheus.Registry, log *slog.Logger) (http.Handler, func(), error) {
	p, err := NewProducer(cfg, rdb, connOpt, reg, log)
	if err != nil {
		return nil, nil, err
	}
	return p.Handler(), p.Close, nil
}

// RunProducer serves the producer API until ctx ends. SIGHUP reloads the
// routing file.
func RunProducer(ctx context.Context, cfg settings.Producer, log *slog.Logger) error {
	// The producer's own client fails fast (redisconn.ClientOptions.FailFast):
	// an API request gets its 503 at once and the sender retries. The web
	// UI and asynq's queue metrics get clients of their own, built the same
	// way so that they follow a failover as quickly.
	rdb, err := cfg.Redis.NewClient(redisconn.ClientOptions{FailFast: true})
	if err != nil {
		return err
	}
	defer rdb.Close()
	connOpt, err := cfg.Redis.AsynqConnOpt(redisconn.ClientOptions{})
	if err != nil {
		return err
	}
	if err := checkRedisAuth(ctx, rdb, cfg.Redis.Redacted()); err != nil {
		return err
	}
	p, err := NewProducer(cfg, rdb, connOpt, NewRegistry(), log)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		return err
	}
	stopHUP := reloadOnHUP(ctx, log, cfg.Routes.File, p.Reload)
	defer stopHUP()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go durable.Watch(watchCtx, rdb, roleWatchInterval, cfg.Redis.ReplicaHint(), log)
	wait := cfg.Redis.Durable()
	srv := cfg.Server
	log.Info("producer starting", "listen", srv.Listen, "redis", cfg.Redis.Redacted(), "monitoring", srv.MonitoringPath,
		"auth", !cfg.Keyring.AuthDisabled, "bots", cfg.BotNames(), "routes", cfg.Routes.File, "wait_replicas", waitShown(wait.Replicas, wait.Auto), "wait_timeout", wait.Timeout)
	if p.MetricsHandler() == nil {
		if err := httpapi.ListenAndServe(ctx, srv.Listen, p.Handler(), log); err != nil {
			return fmt.Errorf("producer: %w", err)
		}
		return nil
	}
	// Both listeners are opened before either serves, so that a taken port
	// fails the start.
	api, err := net.Listen("tcp", srv.Listen)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	mln, err := net.Listen("tcp", srv.MetricsListen)
	if err != nil {
		_ = api.Close()
		return fmt.Errorf("producer: metrics listener (%s): %w", producer.EnvMetricsListen, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- httpapi.Serve(ctx, mln, p.MetricsHandler(), log.With("server", "metrics")) }()
	go func() { errc <- httpapi.Serve(ctx, api, p.Handler(), log) }()
	first := <-errc
	cancel()
	if second := <-errc; first == nil {
		first = second
	}
	if first != nil {
		return fmt.Errorf("producer: %w", first)
	}
	return nil
}

// waitShown renders the replica wait for the start-up line.
func waitShown(replicas int, auto bool) string {
	if auto {
		return "auto"
	}
	return strconv.Itoa(replicas)
}
