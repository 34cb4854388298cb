package producer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/quota"
)

// Config configures the API.
type Config struct {
	// Enqueuer stores messages. Required.
	Enqueuer *jobs.Enqueuer
	// Redis is pinged by /readyz unless Ready is set. Required.
	Redis redis.UniversalClient
	// Ready, when set, is /readyz's check instead of a PING: its error
	// text is the 503's message, so it must hold no secret. The producer
	// uses it to report a Redis that is a read-only replica.
	Ready func(ctx context.Context) error
	// Keyring authenticates requests: every endpoint but the self-
	// authenticating mounts, /livez, /readyz and /metrics needs a token from
	// it with the endpoint's scope. httpapi.OpenKeyring turns
	// authentication off, for local use only. Required.
	Keyring *httpapi.Keyring
	// MaxBodyBytes bounds request bodies; default [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// Monitoring, when set, is the read-only web UI, served under
	// MonitoringPath to every token (browsers log in with basic auth, the
	// token as password); MonitoringAdmin, when set, is the read-write UI,
	// served instead to tokens with the admin scope. A request that could
	// change something (any method but GET and HEAD) without that scope
	// gets a 403.
	Monitoring      http.Handler
	MonitoringAdmin http.Handler
	MonitoringPath  string
	// Metrics, when set, is served at /metrics, behind MetricsToken when
	// that is set (otherwise without authentication: bind the port
	// privately, or serve the metrics on a listener of their own).
	Metrics      http.Handler
	MetricsToken string
	// Messages, when set, serves the ledger: GET /v1/messages/{id} (and by
	// idempotency key), DELETE to cancel, POST .../retry, and the filtered
	// POST /v1/messages/retry.
	Messages *ledger.Messages
	// Callbacks checks a message's callback_url before it is stored
	// (statushook.Emitter.CheckURL): an error naming the field is a 400.
	// Nil refuses every callback_url.
	Callbacks httpapi.URLChecker
	// Mounts are further endpoints, each exported by the package that owns
	// it (the alerts API, heartbeats, webhooks, broadcasts...).
	Mounts []httpapi.Mount
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the API's metrics; nil means none.
	Registerer prometheus.Registerer
	// Quotas, when set, counts each token's queued messages and the
	// mounts' rate quotas (internal/quota); nil counts nothing.
	Quotas *quota.Store
}

// api is the producer's HTTP interface.
type api struct {
	cfg      Config
	requests *prometheus.CounterVec
	handler  http.Handler
}

// NewAPI validates cfg and returns the API.
func NewAPI(cfg Config) (*api, error) {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var errs []error
	if cfg.Enqueuer == nil {
		errs = append(errs, errors.New("producer: Config.Enqueuer is required"))
	}
	if cfg.Redis == nil {
		errs = append(errs, errors.New("producer: Config.Redis is required"))
	}
	if cfg.Keyring == nil {
		errs = append(errs, errors.New("producer: Config.Keyring is required: set HERALD_API_TOKEN (or HERALD_TOKENS_FILE), or HERALD_AUTH_DISABLED=true for local use"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	a := &api{cfg: cfg, requests: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_api_requests_total",
		Help: "API requests by route and HTTP status code.",
	}, []string{"route", "code"})}
	h, err := a.routes()
	if err != nil {
		return nil, err
	}
	a.handler = h
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(a.requests)
	}
	return a, nil
}

// Handler returns the API's routes. Every state-changing request a browser
// sends from another origin is refused (httpapi.SameOrigin); without
// authentication, POST requests other than the web UI's must also be JSON.
func (a *api) Handler() http.Handler { return a.handler }

// routes builds the handler. Conflicting patterns (a monitoring path on
// top of an API route) are an error naming the setting, not a panic.
func (a *api) routes() (h http.Handler, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("producer: the routes conflict (%v): set HERALD_MONITORING_PATH to a path of its own such as /monitoring", p)
		}
	}()
	mux := http.NewServeMux()
	mux.Handle("POST /v1/messages", a.authed(httpapi.ScopeSend, http.HandlerFunc(a.postMessage)))
	allow := "POST"
	if a.cfg.Messages != nil {
		a.messageRoutes(mux)
		allow = "GET, POST"
	}
	mux.HandleFunc("/v1/messages", httpapi.MethodNotAllowed(allow))
	for _, m := range a.cfg.Mounts {
		h := a.settled(m.Handler)
		if !m.SelfAuth {
			h = a.authed(cmp.Or(m.Scope, httpapi.ScopeSend), a.quotaed(m.Quota, h))
		}
		mux.Handle(m.Pattern, h)
	}
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", a.readyz)
	if a.cfg.Metrics != nil {
		mux.Handle("GET /metrics", a.metrics())
	}
	var uiPath string
	if a.cfg.Monitoring != nil && a.cfg.MonitoringPath != "" {
		uiPath = strings.TrimSuffix(a.cfg.MonitoringPath, "/")
		mux.Handle(uiPath+"/", a.monitoring())
		mux.Handle(uiPath, http.RedirectHandler(uiPath+"/", http.StatusFound))
	}
	mux.HandleFunc("/", httpapi.NotFound("no such endpoint; see POST /v1/messages"))
	h = mux
	if a.cfg.Keyring.Open() {
		h = httpapi.RequireJSON(h, uiPath)
	}
	return httpapi.SameOrigin(h), nil
}

// authed requires a token carrying scope (bearer, or for browsers basic
// auth whose password is the token) and puts its principal on the request's
// context.
func (a *api) authed(scope httpapi.Scope, next http.Handler) http.Handler {
	return a.cfg.Keyring.Require(scope, next)
}

func (a *api) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := a.readiness(ctx); err != nil {
		msg := "redis is unavailable"
		var np *durable.NotPrimaryError
		if errors.As(err, &np) {
			msg = err.Error()
		}
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "%s", msg))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

func (a *api) postMessage(w http.ResponseWriter, r *http.Request) {
	status := a.handleMessage(w, r)
	a.requests.WithLabelValues("/v1/messages", strconv.Itoa(status)).Inc()
}

// threadSpace picks the namespace of a message's thread: the token's own,
// so that it reaches only threads the same token opened. A key naming an
// alert's thread ("alert/…", as the alert's message shows it) is taken as
// written for a token with the operate scope, to reply to or edit the
// alert's message (say, "false alarm"); a sender's token gets a 403, and
// nobody opens an alert's thread but its alert.
func threadSpace(p httpapi.Principal, t *jobs.Thread) (string, *httpapi.Error) {
	if t == nil || !strings.HasPrefix(t.Key, jobs.AlertThreadSpace) {
		return jobs.MessageThreadSpace(p.Name), nil
	}
	switch {
	case t.Mode == jobs.ThreadOpen:
		return "", httpapi.Invalid("invalid message", jobs.FieldError{Field: "thread.mode",
			Message: "an alert's thread (a key starting with " + jobs.AlertThreadSpace + ") is opened by its alert only; reply to it or edit it instead"})
	case !p.Has(httpapi.ScopeOperate):
		return "", httpapi.Errorf(http.StatusForbidden, httpapi.CodeForbidden,
			"thread.key names an alert's thread: token %q may only reach threads it opened; replying to or editing an alert's message needs the %q scope",
			p.Name, httpapi.ScopeOperate)
	}
	return "", nil
}

func (a *api) handleMessage(w http.ResponseWriter, r *http.Request) int {
	// The principal names the namespace of the message's thread: without
	// one there is no telling whose threads it may reach.
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok {
		httpapi.Forbidden(w, "this request carries no credential to send messages under")
		return http.StatusForbidden
	}
	var req messageRequest
	if err := httpapi.DecodeJSON(w, r, a.cfg.MaxBodyBytes, &req); err != nil {
		var he *httpapi.Error
		errors.As(err, &he)
		httpapi.WriteError(w, he)
		return he.Status
	}
	if h := r.Header.Get("Idempotency-Key"); h != "" {
		if req.IdempotencyKey != "" && req.IdempotencyKey != h {
			httpapi.WriteError(w, httpapi.Invalid("conflicting idempotency keys", jobs.FieldError{Field: "idempotency_key", Message: "differs from the Idempotency-Key header; send one or make them equal"}))
			return http.StatusBadRequest
		}
		req.IdempotencyKey = h
	}
	space, herr := threadSpace(p, req.Thread)
	if herr != nil {
		httpapi.WriteError(w, herr)
		return herr.Status
	}
	if herr := httpapi.CheckCallbackURL(a.cfg.Callbacks, req.CallbackURL); herr != nil {
		httpapi.WriteError(w, herr)
		return herr.Status
	}
	if err := a.bulk(req.Queue, len(req.Text)); err != nil {
		httpapi.RefuseBulk(w, err)
		return http.StatusServiceUnavailable
	}
	now := time.Now().UTC()
	if status := httpapi.TakeQuota(w, r, a.cfg.Quotas, a.cfg.Logger, now, quota.Want{Name: quota.NameQueued, N: 1}); status != 0 {
		return status
	}
	ctx := durable.Track(r.Context())
	res, err := a.cfg.Enqueuer.Enqueue(ctx, jobs.Request{Queue: req.Queue, Coalesce: req.Coalesce, CheckMarkup: true, Message: jobs.SendMessage{
		Chat: string(req.Chat), Bot: req.Bot, Text: req.Text, ParseMode: req.ParseMode,
		DisableNotification: req.DisableNotification, MessageThreadID: req.MessageThreadID,
		DisableLinkPreview: req.DisableLinkPreview, ProtectContent: req.ProtectContent,
		IdempotencyKey: req.IdempotencyKey, Photo: req.Photo, Buttons: req.Buttons, Thread: req.Thread,
		From: p.Name, CallbackURL: req.CallbackURL, CreatedAt: now, Paid: p.Paid,
	}, ThreadSpace: space})
	a.settleQuota(ctx, p.Name, now, res, err)
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		httpapi.WriteError(w, httpapi.Invalid("invalid message", verr.Fields...))
		return http.StatusBadRequest
	case err != nil:
		a.cfg.Logger.Error("enqueue failed; answering 503", "error", err)
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "the queue is unavailable; nothing was stored, retry later"))
		return http.StatusServiceUnavailable
	}
	// A 202 (a duplicate's too) promises that the message survives a
	// failover: the writes must be on the replicas first.
	if err := a.cfg.Enqueuer.Settle(ctx, heraldSlot); err != nil {
		a.cfg.Logger.Warn("message stored but not confirmed; answering 503", "task_id", res.TaskID, "error", err)
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "%s", notStoredMessage(err)))
		return http.StatusServiceUnavailable
	}
	if res.Duplicate {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	httpapi.WriteJSON(w, http.StatusAccepted, res)
	a.cfg.Logger.Debug("message accepted", "task_id", res.TaskID, "queue", res.Queue, "duplicate", res.Duplicate)
	return http.StatusAccepted
}
