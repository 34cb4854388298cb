package statushook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// The routes of Handler, for the producer to mount with the operate
// scope: an endpoint's secret is what lets a receiver trust a callback.
const (
	EndpointPattern = "GET /v1/callbacks/endpoint"
	EnablePattern   = "POST /v1/callbacks/endpoint/enable"
)

// The states of an endpoint.
const (
	StateHealthy  = "healthy"
	StateFailing  = "failing"
	StateDisabled = "disabled"
)

// EndpointState is what GET /v1/callbacks/endpoint answers about one
// endpoint: its health and the secret its callbacks are signed with.
type EndpointState struct {
	// Endpoint is scheme://host[:port]/path: the URL without its query,
	// which shares the secret and the health.
	Endpoint string `json:"endpoint"`
	// State is healthy, failing (a run of failures is under way) or
	// disabled.
	State string `json:"state"`
	// Secret is the endpoint's signing secret, for the receiver's Verify.
	Secret         string     `json:"secret"`
	Failures       int        `json:"failures,omitempty"`
	FirstFailure   *time.Time `json:"first_failure,omitempty"`
	LastFailure    *time.Time `json:"last_failure,omitempty"`
	LastError      string     `json:"last_error,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
}

// Endpoint returns the state and the secret of the endpoint rawURL names
// (any URL of it; its query is ignored). The URL must pass the policy.
func (e *Emitter) Endpoint(ctx context.Context, rawURL string) (EndpointState, error) {
	endpoint, err := e.endpointOf(rawURL)
	if err != nil {
		return EndpointState{}, err
	}
	r, err := e.health.read(ctx, endpoint)
	if err != nil {
		return EndpointState{}, fmt.Errorf("reading the health of %s: %w", endpoint, err)
	}
	s := EndpointState{Endpoint: endpoint, State: StateHealthy, Secret: endpointSecret(e.master, endpoint),
		Failures: r.Failures, LastError: r.LastError, DisabledReason: r.DisabledReason,
		FirstFailure: timeOrNil(r.FirstFailure), LastFailure: timeOrNil(r.LastFailure), DisabledAt: timeOrNil(r.DisabledAt)}
	switch {
	case !r.DisabledAt.IsZero():
		s.State = StateDisabled
	case !r.FirstFailure.IsZero():
		s.State = StateFailing
	}
	return s, nil
}

// Enable clears the endpoint's health, disabled or failing: its next
// events are posted again (events archived meanwhile are not; run them
// again from the web UI). It reports whether the endpoint was disabled.
func (e *Emitter) Enable(ctx context.Context, rawURL string) (bool, error) {
	endpoint, err := e.endpointOf(rawURL)
	if err != nil {
		return false, err
	}
	was, err := e.health.enable(ctx, endpoint)
	if err != nil {
		return false, fmt.Errorf("enabling %s: %w", endpoint, err)
	}
	return was, nil
}

// endpointOf checks rawURL against the policy (ErrOff when callbacks are
// off) and returns its endpoint.
func (e *Emitter) endpointOf(rawURL string) (string, error) {
	if err := e.CheckURL(rawURL); err != nil {
		return "", err
	}
	u, _ := e.policy.ValidateURL(rawURL)
	return endpointOf(u), nil
}

// timeOrNil is t in UTC, or nil for the zero time.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// maxEnableBody bounds the body of an enable request.
const maxEnableBody = 8 << 10

// Handler serves EndpointPattern (?url=U: the EndpointState as JSON) and
// EnablePattern (a JSON body {"url": U}: {"endpoint", "state": "healthy",
// "was_disabled"}). Errors are JSON in the API's shape,
// {"error": {"code", "message", "fields"}}: 400 naming the url field for a
// URL the policy refuses (and when callbacks are off), 503 when Redis does
// not answer.
func (e *Emitter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(EndpointPattern, func(w http.ResponseWriter, r *http.Request) {
		s, err := e.Endpoint(r.Context(), r.URL.Query().Get("url"))
		if err != nil {
			writeFailure(w, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc(EnablePattern, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			URL string `json:"url"`
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEnableBody))
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err != nil || dec.Decode(&req) != nil {
			httpapi.WriteError(w, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, `the body must be {"url": "<callback URL>"}`))
			return
		}
		was, err := e.Enable(r.Context(), req.URL)
		if err != nil {
			writeFailure(w, err)
			return
		}
		endpoint, _ := e.endpointOf(req.URL)
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"endpoint": endpoint, "state": StateHealthy, "was_disabled": was})
	})
	return mux
}

// Mounts are the endpoints' routes (Handler), behind the operate scope:
// they show an endpoint's signing secret and enable a disabled endpoint,
// neither of which a sender's token may.
func (e *Emitter) Mounts() []httpapi.Mount {
	h := e.Handler()
	return []httpapi.Mount{
		{Pattern: EndpointPattern, Handler: h, Scope: httpapi.ScopeOperate},
		{Pattern: EnablePattern, Handler: h, Scope: httpapi.ScopeOperate},
	}
}

// writeFailure answers a URL the policy refuses with 400 naming the url
// field, anything else (Redis) with 503.
func writeFailure(w http.ResponseWriter, err error) {
	var uerr *URLError
	if errors.As(err, &uerr) {
		httpapi.WriteError(w, httpapi.Invalid("url: "+uerr.Reason, jobs.FieldError{Field: "url", Message: uerr.Reason}))
		return
	}
	httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "redis is unavailable"))
}
