package alerts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// maxAlertsPerRequest bounds the alerts of one POST /v1/alerts batch.
const maxAlertsPerRequest = 100

// apiRequest is the body of POST /v1/alerts: either the fields of one
// alert (the JSON form of Alert), or "alerts" holding a list of them, never
// both.
type apiRequest struct {
	Title       string            `json:"title"`
	Body        string            `json:"body"`
	Severity    Severity          `json:"severity"`
	Status      Status            `json:"status"`
	Source      string            `json:"source"`
	URL         string            `json:"url"`
	Labels      map[string]string `json:"labels"`
	Fingerprint string            `json:"fingerprint"`
	Key         string            `json:"key"`
	ImageURL    string            `json:"image_url"`
	Time        time.Time         `json:"time"`
	Alerts      []json.RawMessage `json:"alerts"`
}

func (r *apiRequest) alert() Alert {
	return Alert{Title: r.Title, Body: r.Body, Severity: r.Severity, Status: r.Status, Source: r.Source,
		URL: r.URL, Labels: r.Labels, Fingerprint: r.Fingerprint, Key: r.Key, ImageURL: r.ImageURL, Time: r.Time}
}

// NewAPIHandler serves POST /v1/alerts, mounted by the caller behind the
// API token. The body is one alert object
//
//	{"title": "Disk full", "severity": "critical", "source": "cron", "labels": {"host": "db-1"}}
//
// or a batch {"alerts": [{...}, {...}]} of up to maxAlertsPerRequest. Alert
// fields: title (required), body, severity (critical, warning, info), status
// (firing, resolved), source, url, labels, fingerprint, key (the alert's
// identity across firing and resolved, for threads), image_url (sent as a
// photo), time (RFC 3339). An
// Idempotency-Key header is the fingerprint of a single alert; in a batch,
// alert i without a fingerprint gets "<key>/<i>".
//
// Answers: 202 with the Dispatched JSON once every message is stored; 400
// (invalid_json, invalid_field naming "title" or, in a batch,
// "alerts[3].title"); 413 for a body over maxBody bytes; 422 no_route when
// an alert matches no route and there is no default route; 503
// unavailable when Redis did not take the messages (nothing is partly
// applied for alerts with fingerprints: a retry completes the batch).
// Nothing is enqueued unless the whole batch is valid and routed.
func NewAPIHandler(d Dispatcher, maxBody int64, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	if maxBody <= 0 {
		maxBody = 1 << 20
	}
	return &apiHandler{d: d, maxBody: maxBody, log: log, now: time.Now}
}

// Mounts are the alerts API's route (NewAPIHandler), behind a sender's
// token.
func Mounts(d Dispatcher, maxBody int64, log *slog.Logger) []httpapi.Mount {
	return []httpapi.Mount{{Pattern: "/v1/alerts", Handler: NewAPIHandler(d, maxBody, log)}}
}

type apiHandler struct {
	d       Dispatcher
	maxBody int64
	log     *slog.Logger
	now     func() time.Time
}

func (h *apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed, "use POST"))
		return
	}
	batch, herr := h.decode(w, r)
	if herr != nil {
		httpapi.WriteError(w, herr)
		return
	}
	ownAlerts(r, batch)
	res, err := h.d.Dispatch(r.Context(), batch)
	var verr *jobs.ValidationError
	switch {
	case err == nil:
	case errors.As(err, &verr):
		httpapi.WriteError(w, httpapi.Invalid("invalid alert", verr.Fields...))
		return
	case errors.Is(err, ErrNoRoute):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusUnprocessableEntity, httpapi.CodeNoRoute,
			"%v: add a route that matches it, or a route with default: true, to the routing file", err))
		return
	case errors.Is(err, jobs.ErrUnavailable):
		h.log.Error("alerts not stored; answering 503", "alerts", len(batch), "stored_messages", len(res.Messages), "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable,
			"the queue is unavailable; retry later (alerts with a fingerprint are never delivered twice)"))
		return
	default:
		h.log.Error("dispatching alerts failed", "alerts", len(batch), "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusInternalServerError, httpapi.CodeInternal, "dispatching the alerts failed"))
		return
	}
	if len(res.Messages) > 0 && allDuplicates(res.Messages) {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	h.log.Debug("alerts accepted", "alerts", len(batch), "messages", len(res.Messages))
	httpapi.WriteJSON(w, http.StatusAccepted, res)
}

func allDuplicates(ms []jobs.Result) bool {
	for _, m := range ms {
		if !m.Duplicate {
			return false
		}
	}
	return true
}

// decode reads the body into a batch of normalised, valid alerts, or
// returns the client error naming every bad field.
func (h *apiHandler) decode(w http.ResponseWriter, r *http.Request) ([]Alert, *httpapi.Error) {
	var req apiRequest
	if err := httpapi.DecodeJSON(w, r, h.maxBody, &req); err != nil {
		var he *httpapi.Error
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "%v", err)
	}
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(key) > MaxFingerprintLen-8 {
		return nil, httpapi.Invalid("invalid header", jobs.FieldError{Field: "Idempotency-Key",
			Message: fmt.Sprintf("is %d bytes long; the limit is %d", len(key), MaxFingerprintLen-8)})
	}
	now := h.now()
	if req.Alerts == nil {
		a := req.alert()
		if key != "" {
			if a.Fingerprint != "" && a.Fingerprint != key {
				return nil, httpapi.Invalid("conflicting idempotency keys", jobs.FieldError{Field: "fingerprint",
					Message: "differs from the Idempotency-Key header; send one of them or make them equal"})
			}
			a.Fingerprint = key
		}
		if err := a.Normalize(now); err != nil {
			return nil, invalidAlert(err, "")
		}
		return []Alert{a}, nil
	}
	if single := req.alert(); !isZeroAlert(&single) {
		return nil, httpapi.Invalid("mixed body", jobs.FieldError{Field: "alerts",
			Message: "send either one alert's fields or an alerts list, not both"})
	}
	switch {
	case len(req.Alerts) == 0:
		return nil, httpapi.Invalid("empty batch", jobs.FieldError{Field: "alerts", Message: "must hold at least one alert"})
	case len(req.Alerts) > maxAlertsPerRequest:
		return nil, httpapi.Invalid("batch too large", jobs.FieldError{Field: "alerts",
			Message: fmt.Sprintf("holds %d alerts; the limit is %d per request: split the batch", len(req.Alerts), maxAlertsPerRequest)})
	}
	batch := make([]Alert, len(req.Alerts))
	var fields []jobs.FieldError
	for i, raw := range req.Alerts {
		prefix := fmt.Sprintf("alerts[%d]", i)
		if fe := decodeAlert(raw, &batch[i], prefix); fe != nil {
			fields = append(fields, *fe)
			continue
		}
		if key != "" && batch[i].Fingerprint == "" {
			batch[i].Fingerprint = fmt.Sprintf("%s/%d", key, i)
		}
		if err := batch[i].Normalize(now); err != nil {
			if he := invalidAlert(err, prefix+"."); he != nil {
				fields = append(fields, he.Fields...)
			}
		}
	}
	if len(fields) > 0 {
		return nil, httpapi.Invalid("invalid alerts", fields...)
	}
	return batch, nil
}

// decodeAlert decodes one element of a batch strictly, naming the field
// at fault with the element's prefix.
func decodeAlert(raw json.RawMessage, a *Alert, prefix string) *jobs.FieldError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(a)
	if err == nil {
		if fe := httpapi.CheckKeys(raw, a); fe != nil {
			return &jobs.FieldError{Field: prefix + "." + fe.Field, Message: fe.Message}
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return &jobs.FieldError{Field: prefix + "." + typeErr.Field, Message: fmt.Sprintf("must not be a JSON %s", typeErr.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &jobs.FieldError{Field: prefix + "." + name, Message: "is not a known alert field"}
	case strings.Contains(err.Error(), "parsing time"):
		return &jobs.FieldError{Field: prefix + ".time", Message: "must be an RFC 3339 time such as 2026-01-02T15:04:05Z"}
	default:
		return &jobs.FieldError{Field: prefix, Message: "must be a JSON object of alert fields"}
	}
}

// invalidAlert turns a Normalize error into a 400 whose field names carry
// prefix.
func invalidAlert(err error, prefix string) *httpapi.Error {
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) {
		return httpapi.Invalid("invalid alert", jobs.FieldError{Field: strings.TrimSuffix(prefix, "."), Message: err.Error()})
	}
	fields := make([]jobs.FieldError, len(verr.Fields))
	for i, f := range verr.Fields {
		fields[i] = jobs.FieldError{Field: prefix + f.Field, Message: f.Message}
	}
	return httpapi.Invalid("invalid alert", fields...)
}

func isZeroAlert(a *Alert) bool {
	return a.Title == "" && a.Body == "" && a.Severity == "" && a.Status == "" && a.Source == "" &&
		a.URL == "" && len(a.Labels) == 0 && a.Fingerprint == "" && a.Key == "" && a.ImageURL == "" && a.Time.IsZero()
}

// ownAlerts makes the alerts of a token without the operate scope its
// own (Alert.Owner): their threads and escalations are apart from every
// other token's, as their messages' threads are, so that another token's
// resolution with the same key neither closes the thread nor stops the
// escalation. An operate-scope token's alerts, and those of a request
// without a token (authentication off), keep the shared identity.
func ownAlerts(r *http.Request, batch []Alert) {
	p, ok := httpapi.PrincipalFrom(r.Context())
	if !ok || p.Name == "" || p.Has(httpapi.ScopeOperate) {
		return
	}
	for i := range batch {
		batch[i].Owner = p.Name
	}
}
