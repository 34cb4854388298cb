package webhooks

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Paths of the receivers. The generic path ends with the mapping's name.
const (
	pathAlertmanager = "/v1/webhooks/alertmanager"
	pathGrafana      = "/v1/webhooks/grafana"
	pathGitHub       = "/v1/webhooks/github"
	pathSentry       = "/v1/webhooks/sentry"
	pathGeneric      = "/v1/webhooks/generic/"
)

// accepted is the body of a 202 answer to a webhook whose alerts were
// stored: how many alerts the payload gave and where their messages went
// (an alert matching two routes gives two messages).
type accepted struct {
	Alerts   int           `json:"alerts"`
	Messages []jobs.Result `json:"messages"`
}

// ignored is the body of a 202 answer to a webhook Herald understood and
// chose not to send (a GitHub ping, an event or action it does not render,
// an empty alert group).
type ignored struct {
	Ignored bool   `json:"ignored"`
	Reason  string `json:"reason"`
}

// Handler validates cfg and returns the receivers, serving
//
//	POST     /v1/webhooks/alertmanager
//	POST|PUT /v1/webhooks/grafana
//	POST     /v1/webhooks/github
//	POST     /v1/webhooks/sentry
//	POST     /v1/webhooks/generic/{name}
//
// and JSON 404 and 405 answers for anything else under /v1/webhooks/.
func Handler(cfg Config) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg, err := cfg.withSecrets()
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, gate: httpapi.NewBodyGate(cfg.UnauthenticatedReads, cfg.UnauthenticatedReadTimeout)}
	mux := http.NewServeMux()
	s.route(mux, pathAlertmanager, s.alertmanager(), http.MethodPost)
	s.route(mux, pathGrafana, s.grafana(), http.MethodPost, http.MethodPut)
	s.route(mux, pathGitHub, s.github(), http.MethodPost)
	s.route(mux, pathSentry, s.sentry(), http.MethodPost)
	s.route(mux, pathGeneric+"{name}", s.generic(), http.MethodPost)
	mux.HandleFunc("/v1/webhooks/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound,
			"no such webhook; see docs/WEBHOOKS.md for the receivers"))
	})
	return mux, nil
}

// Mounts are the webhook receivers' routes (Handler) under /v1/webhooks/:
// each receiver authenticates its requests itself (a signature, a secret
// or a token), so they are served without the API's token check.
func Mounts(cfg Config) ([]httpapi.Mount, error) {
	h, err := Handler(cfg)
	if err != nil {
		return nil, err
	}
	return []httpapi.Mount{{Pattern: "/v1/webhooks/", Handler: h, SelfAuth: true}}, nil
}

// server holds the defaulted config the receivers share.
type server struct {
	cfg Config
	// gate reads the bodies of requests not authenticated before their
	// body is read: signed webhooks, and every webhook without auth.
	gate *httpapi.BodyGate
}

// decoded is what a receiver made of a payload: the alerts to dispatch, or
// the reason nothing is sent, plus attributes for the log line (event and
// delivery ids, never content).
type decoded struct {
	alerts  []alerts.Alert
	ignored string
	attrs   []any
}

// one completes the decoding of a payload that renders into at most one
// alert: an error, an ignore reason, or the alert, checked.
func one(d decoded, a alerts.Alert, reason string, e *httpapi.Error, what string) (decoded, *httpapi.Error) {
	if e != nil {
		return d, e
	}
	if reason != "" {
		d.ignored = reason
		return d, nil
	}
	d.alerts = []alerts.Alert{a}
	return d, finish(d.alerts, what)
}

// receiver is one sender's steps. Any step may be nil.
type receiver struct {
	name string
	// disabled, when set, answers 404 with this message: the receiver
	// lacks the secret it needs.
	disabled string
	// authorize checks header credentials before the body is read.
	authorize func(r *http.Request) *httpapi.Error
	// precheck refuses, before the body is read, a request whose
	// signature headers cannot be valid (missing, malformed, stale).
	precheck func(r *http.Request) *httpapi.Error
	// verify checks a signature over the raw body before it is parsed.
	verify func(r *http.Request, body []byte) *httpapi.Error
	// decode turns the payload into alerts.
	decode func(r *http.Request, body []byte) (decoded, *httpapi.Error)
}

func (s *server) route(mux *http.ServeMux, path string, rc receiver, methods ...string) {
	for _, m := range methods {
		mux.HandleFunc(m+" "+path, func(w http.ResponseWriter, r *http.Request) { s.serve(rc, w, r) })
	}
	allow := strings.Join(methods, ", ")
	mux.HandleFunc(path, httpapi.MethodNotAllowed(allow))
}

// serve runs a receiver's steps and answers. It logs one line per request.
func (s *server) serve(rc receiver, w http.ResponseWriter, r *http.Request) {
	log := s.cfg.Logger.With("webhook", rc.name)
	if rc.disabled != "" {
		s.reject(w, log, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "%s", rc.disabled))
		return
	}
	if rc.authorize != nil {
		if e := rc.authorize(r); e != nil {
			s.reject(w, log.With("remote", r.RemoteAddr), e)
			return
		}
	}
	if rc.precheck != nil {
		if e := rc.precheck(r); e != nil {
			s.reject(w, log.With("remote", r.RemoteAddr), e)
			return
		}
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		s.reject(w, log, httpapi.Errorf(http.StatusRequestEntityTooLarge, httpapi.CodeBodyTooLarge,
			"body exceeds %d bytes", s.cfg.MaxBodyBytes))
		return
	}
	var (
		body []byte
		err  error
	)
	if rc.authorize == nil {
		// Nothing authenticated the sender yet: the body is read through
		// the gate, which bounds how many such bodies are read at once
		// and how long each may take.
		body, err = s.gate.ReadBody(w, r, s.cfg.MaxBodyBytes)
	} else {
		body, err = httpapi.ReadBody(w, r, s.cfg.MaxBodyBytes)
	}
	if err != nil {
		s.reject(w, log, asHTTPError(err))
		return
	}
	if rc.verify != nil {
		if e := rc.verify(r, body); e != nil {
			s.reject(w, log.With("remote", r.RemoteAddr), e)
			return
		}
	}
	d, e := rc.decode(r, body)
	log = log.With(d.attrs...)
	if e != nil {
		s.reject(w, log, e)
		return
	}
	if d.ignored != "" || len(d.alerts) == 0 {
		if d.ignored == "" {
			d.ignored = "the payload holds no alerts"
		}
		log.Info("webhook accepted and ignored", "reason", d.ignored)
		httpapi.WriteJSON(w, http.StatusAccepted, ignored{Ignored: true, Reason: d.ignored})
		return
	}
	res, err := s.cfg.Dispatcher.Dispatch(r.Context(), d.alerts)
	if err != nil {
		e := dispatchError(err)
		if e.Status >= 500 {
			log.Error("dispatch failed; answering 503 so the sender retries", "alerts", len(d.alerts), "error", err)
		}
		s.reject(w, log, e)
		return
	}
	if res.Messages == nil {
		res.Messages = []jobs.Result{}
	}
	log.Info("webhook accepted", "alerts", len(d.alerts), "messages", len(res.Messages))
	httpapi.WriteJSON(w, http.StatusAccepted, accepted{Alerts: len(d.alerts), Messages: res.Messages})
}

// reject writes e, with the authentication schemes on a 401 unauthorized,
// and logs it (client errors at warn level: they may point at a sender
// misconfiguration).
func (s *server) reject(w http.ResponseWriter, log *slog.Logger, e *httpapi.Error) {
	if e.Status < 500 {
		log.Warn("webhook rejected", "status", e.Status, "code", e.Code, "reason", e.Message)
	}
	if e.Code == httpapi.CodeUnauthorized {
		httpapi.Unauthorized(w, e.Message)
		return
	}
	httpapi.WriteError(w, e)
}

// dispatchError maps a Dispatcher error to the answer: 400 for invalid
// alerts, 422 when no route takes them, 503 otherwise so the sender retries.
func dispatchError(err error) *httpapi.Error {
	var (
		he   *httpapi.Error
		verr *jobs.ValidationError
	)
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &verr):
		return httpapi.Invalid("the alerts were refused", verr.Fields...)
	case errors.Is(err, alerts.ErrNoRoute):
		return httpapi.Errorf(http.StatusUnprocessableEntity, httpapi.CodeNoRoute,
			"no route matches these alerts and the routing file has no default route; nothing was stored")
	default:
		return httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable,
			"the queue is unavailable; nothing was stored, retry later")
	}
}

// asHTTPError returns err as an *httpapi.Error, wrapping a foreign error as
// a 400 invalid_json.
func asHTTPError(err error) *httpapi.Error {
	var he *httpapi.Error
	if errors.As(err, &he) {
		return he
	}
	return httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "%v", err)
}

// requireToken returns the authorize step of the token-authenticated
// receivers: nil when authentication is off (an open keyring).
func (s *server) requireToken(sender string) func(r *http.Request) *httpapi.Error {
	k := s.cfg.Keyring
	if k.Open() {
		return nil
	}
	return func(r *http.Request) *httpapi.Error {
		p, ok := k.Identify(r)
		if !ok {
			return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeUnauthorized,
				"missing or wrong token: configure %s to send a Herald API token as a bearer token or as the basic-auth password", sender)
		}
		if !p.Has(httpapi.ScopeSend) {
			return httpapi.Errorf(http.StatusForbidden, httpapi.CodeForbidden,
				"token %q lacks the %q scope webhooks need: give %s a token that has it", p.Name, httpapi.ScopeSend, sender)
		}
		return nil
	}
}
