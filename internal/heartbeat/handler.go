package heartbeat

import (
	"context"
	"errors"
	"net/http"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// List is the body of GET /v1/heartbeats.
type List struct {
	Heartbeats []Heartbeat `json:"heartbeats"`
}

// handler serves the heartbeat routes.
type handler struct {
	cfg Config
	st  *store
	dl  *deliverer
}

// NewHandler validates cfg and returns the heartbeat API:
//
//	PUT|POST /v1/heartbeats/{name}  record a ping (?interval=5m&grace=1m&severity=critical, or a JSON body)
//	GET      /v1/heartbeats         list every heartbeat with its state
//	GET      /v1/heartbeats/{name}  one heartbeat
//	DELETE   /v1/heartbeats/{name}  stop watching it
//
// It does no authentication: mount it behind the API token, on both
// "/v1/heartbeats" and "/v1/heartbeats/".
func NewHandler(cfg Config) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st := &store{rdb: cfg.Redis, cfg: cfg}
	h := &handler{cfg: cfg, st: st, dl: &deliverer{st: st, d: cfg.Dispatcher, timeout: cfg.DispatchTimeout, log: cfg.Logger}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/heartbeats/{name}", h.ping)
	mux.HandleFunc("POST /v1/heartbeats/{name}", h.ping)
	mux.HandleFunc("GET /v1/heartbeats/{name}", h.get)
	mux.HandleFunc("DELETE /v1/heartbeats/{name}", h.remove)
	mux.HandleFunc("GET /v1/heartbeats", h.list)
	mux.HandleFunc("/v1/heartbeats/{name}", methodNotAllowed("GET, PUT, POST, DELETE"))
	mux.HandleFunc("/v1/heartbeats", methodNotAllowed("GET"))
	mux.HandleFunc("/v1/heartbeats/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Invalid("invalid heartbeat name", *validateName("")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no such endpoint; see /v1/heartbeats"))
	})
	return mux, nil
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", allow)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed, "use %s", allow))
	}
}

// unavailable answers 503: the request was not recorded and should be
// retried.
func (h *handler) unavailable(w http.ResponseWriter, what string, err error) {
	h.cfg.Logger.Error("heartbeat store unavailable; answering 503", "op", what, "error", err)
	httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable,
		"the heartbeat store is unavailable; the %s was not recorded, retry later", what))
}

func nameOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if fe := validateName(name); fe != nil {
		httpapi.WriteError(w, httpapi.Invalid("invalid heartbeat name", *fe))
		return "", false
	}
	return name, true
}

func (h *handler) ping(w http.ResponseWriter, r *http.Request) {
	name, ok := nameOf(w, r)
	if !ok {
		return
	}
	body, err := httpapi.ReadBody(w, r, h.cfg.MaxBodyBytes)
	if err != nil {
		var he *httpapi.Error
		errors.As(err, &he)
		httpapi.WriteError(w, he)
		return
	}
	settings, herr := parsePing(r.URL.Query(), r.Header.Get("Content-Type"), body)
	if herr != nil {
		httpapi.WriteError(w, herr)
		return
	}
	res, err := h.st.ping(r.Context(), name, settings)
	switch {
	case errors.Is(err, errIntervalRequired):
		httpapi.WriteError(w, httpapi.Invalid("unknown heartbeat", jobs.FieldError{Field: "interval",
			Message: "is required on the first ping of a heartbeat: add ?interval=5m (or \"interval\" in the JSON body)"}))
		return
	case errors.Is(err, errTooMany):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusConflict, CodeTooManyHeartbeats,
			"this server keeps at most %d heartbeats: delete unused ones (DELETE /v1/heartbeats/{name}) or raise HERALD_MAX_HEARTBEATS; pings of existing heartbeats still work",
			h.cfg.MaxHeartbeats))
		return
	case err != nil:
		h.unavailable(w, "ping", err)
		return
	}
	if len(res.pending) > 0 {
		// The ping ended an outage: send the recovery now. It is recorded
		// in the outbox, so if this fails (or the client goes away) a
		// checker sends it at its next check; the ping itself is stored
		// either way.
		ctx := context.WithoutCancel(r.Context())
		if _, err := h.dl.deliver(ctx, res.pending); err != nil {
			h.cfg.Logger.Warn("heartbeat recovery not dispatched by the ping; the checker will retry", "heartbeat", name, "error", err)
		} else {
			h.cfg.Logger.Info("heartbeat recovered", "heartbeat", name)
		}
	}
	status := http.StatusOK
	if res.created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, res.rec.view(name, res.now))
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	name, ok := nameOf(w, r)
	if !ok {
		return
	}
	_, hbs, err := h.st.read(r.Context(), name)
	switch {
	case err != nil:
		h.unavailable(w, "read", err)
	case len(hbs) == 0:
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no heartbeat named %q", name))
	default:
		httpapi.WriteJSON(w, http.StatusOK, hbs[0])
	}
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	_, hbs, err := h.st.read(r.Context(), "")
	if err != nil {
		h.unavailable(w, "read", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, List{Heartbeats: hbs})
}

func (h *handler) remove(w http.ResponseWriter, r *http.Request) {
	name, ok := nameOf(w, r)
	if !ok {
		return
	}
	existed, err := h.st.remove(r.Context(), name)
	switch {
	case err != nil:
		h.unavailable(w, "delete", err)
	case !existed:
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no heartbeat named %q", name))
	default:
		h.cfg.Logger.Info("heartbeat deleted", "heartbeat", name)
		w.WriteHeader(http.StatusNoContent)
	}
}
