package heartbeat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// list is the body of GET /v1/heartbeats.
type list struct {
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
//	PUT|POST /v1/heartbeats/{name}        record a success ping (?interval=5m&grace=1m&severity=critical,
//	                                      ?schedule=0+3+*+*+*&time_zone=Europe/Berlin, or a JSON body)
//	PUT|POST /v1/heartbeats/{name}/start  a run has started (settings in the query string)
//	PUT|POST /v1/heartbeats/{name}/fail   a run has failed: alert now; the body is the detail
//	GET      /v1/heartbeats               list every heartbeat with its state
//	GET      /v1/heartbeats/{name}        one heartbeat
//	DELETE   /v1/heartbeats/{name}        stop watching it
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
	for _, sig := range []string{sigStart, sigFail} {
		mux.HandleFunc("PUT /v1/heartbeats/{name}/"+sig, h.signal(sig))
		mux.HandleFunc("POST /v1/heartbeats/{name}/"+sig, h.signal(sig))
		mux.HandleFunc("/v1/heartbeats/{name}/"+sig, httpapi.MethodNotAllowed("PUT, POST"))
	}
	mux.HandleFunc("/v1/heartbeats/{name}", httpapi.MethodNotAllowed("GET, PUT, POST, DELETE"))
	mux.HandleFunc("/v1/heartbeats", httpapi.MethodNotAllowed("GET"))
	mux.HandleFunc("/v1/heartbeats/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Invalid("invalid heartbeat name", *validateName("")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no such endpoint; see /v1/heartbeats"))
	})
	return mux, nil
}

// Mounts are the heartbeat API's routes (NewHandler), behind a sender's
// token but for deleting a heartbeat: that ends its overdue alerts, as a
// silence would, and takes the operate scope.
func Mounts(cfg Config) ([]httpapi.Mount, error) {
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	return []httpapi.Mount{
		{Pattern: "/v1/heartbeats", Handler: h},
		{Pattern: "/v1/heartbeats/", Handler: h},
		{Pattern: "DELETE /v1/heartbeats/{name}", Handler: h, Scope: httpapi.ScopeOperate},
	}, nil
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
	h.record(w, r, name, sigPing, settings, "")
}

// signal serves /start and /fail: the settings come from the query string
// only, and the body of a /fail is the failure's detail (any content type;
// what exceeds MaxFailDetail is dropped, not refused, so that a failure is
// never lost to its log being long).
func (h *handler) signal(sig string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, ok := nameOf(w, r)
		if !ok {
			return
		}
		settings, herr := parsePing(r.URL.Query(), "", nil)
		if herr != nil {
			httpapi.WriteError(w, herr)
			return
		}
		var detail string
		if sig == sigFail {
			// A body that breaks off still reports the failure, with
			// what arrived of it.
			b, _ := io.ReadAll(io.LimitReader(r.Body, int64(h.cfg.MaxFailDetail)+1))
			detail = sanitizeDetail(b, h.cfg.MaxFailDetail)
		}
		// Read what is left (boundedly) so the connection can be reused.
		_, _ = io.CopyN(io.Discard, r.Body, h.cfg.MaxBodyBytes)
		h.record(w, r, name, sig, settings, detail)
	}
}

// record stores a signal, dispatches the alert it raised or ended, and
// answers with the heartbeat.
func (h *handler) record(w http.ResponseWriter, r *http.Request, name, sig string, settings pingSettings, detail string) {
	res, err := h.st.signal(r.Context(), name, sig, settings, detail)
	switch {
	case errors.Is(err, errIntervalRequired):
		httpapi.WriteError(w, httpapi.Invalid("unknown heartbeat", jobs.FieldError{Field: "interval",
			Message: "or schedule is required on the first signal of a heartbeat: add ?interval=5m or ?schedule=0+3+*+*+* (or \"interval\" or \"schedule\" in the JSON body of a ping)"}))
		return
	case errors.Is(err, errNoNextRun):
		httpapi.WriteError(w, httpapi.Invalid("heartbeat schedule", jobs.FieldError{Field: "schedule",
			Message: "no longer fires: declare another schedule or an interval"}))
		return
	case errors.Is(err, errTooMany):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusConflict, codeTooManyHeartbeats,
			"this server keeps at most %d heartbeats: delete unused ones (DELETE /v1/heartbeats/{name}) or raise HERALD_MAX_HEARTBEATS; pings of existing heartbeats still work",
			h.cfg.MaxHeartbeats))
		return
	case err != nil:
		what := "ping"
		if sig != sigPing {
			what = "/" + sig
		}
		h.unavailable(w, what, err)
		return
	}
	if len(res.pending) > 0 {
		// The signal ended an outage (a ping: the recovery) or began one
		// (a fail: the alert): send it now. It is recorded in the outbox,
		// so if this fails (or the client goes away) a checker sends it at
		// its next check; the signal itself is stored either way.
		ctx := context.WithoutCancel(r.Context())
		if _, err := h.dl.deliver(ctx, res.pending); err != nil {
			h.cfg.Logger.Warn("heartbeat alert not dispatched by the request; the checker will retry", "heartbeat", name, "signal", sig, "error", err)
		} else if sig == sigFail {
			h.cfg.Logger.Info("heartbeat failure reported", "heartbeat", name)
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

// sanitizeDetail turns the first bytes of a /fail body into plain text for
// the alert: invalid UTF-8 and a rune cut by the limit are dropped, line
// ends become \n, other control characters become spaces, and surrounding
// blank space is trimmed. A body longer than limit bytes is cut there and
// marked with an ellipsis.
func sanitizeDetail(b []byte, limit int) string {
	cut := len(b) > limit
	if cut {
		b = b[:limit]
		// Drop a rune the limit cut in half, rather than mark it invalid.
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1]
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if cut && s != "" {
		s += " …"
	}
	return s
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
	httpapi.WriteJSON(w, http.StatusOK, list{Heartbeats: hbs})
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
