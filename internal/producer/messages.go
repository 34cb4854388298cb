package producer

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
)

// messageRoutes serves the ledger: what became of a message, and cancel
// and retry. A token with the send scope reaches the messages it sent (and
// reads those Herald made itself, which the read-only web UI shows it
// anyway); the operate scope reaches every message.
func (a *api) messageRoutes(mux *http.ServeMux) {
	send, operate := httpapi.ScopeSend, httpapi.ScopeOperate
	mux.Handle("GET /v1/messages/{id}", a.authed(send, http.HandlerFunc(a.getMessage)))
	mux.Handle("GET /v1/messages", a.authed(send, http.HandlerFunc(a.findMessage)))
	mux.Handle("DELETE /v1/messages/{id}", a.authed(send, http.HandlerFunc(a.cancelMessage)))
	mux.Handle("POST /v1/messages/{id}/retry", a.authed(send, http.HandlerFunc(a.retryMessage)))
	mux.Handle("POST /v1/messages/retry", a.authed(operate, http.HandlerFunc(a.retryFailed)))
}

// reach is what a request may do with a message.
type reach int

const (
	reachRead reach = iota
	reachAct        // cancel, retry
)

// lookup finds the message for the request's principal. A message the
// principal may not reach is answered as unknown, so ids of other tokens'
// messages cannot be probed.
func (a *api) lookup(w http.ResponseWriter, r *http.Request, id string, want reach) (ledger.Status, bool) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	st, err := a.cfg.Messages.Status(r.Context(), id)
	if err == nil && !mayReach(p, st, want) {
		err = ledger.ErrNotFound
	}
	if err != nil {
		a.ledgerError(w, id, err)
		return st, false
	}
	return st, true
}

// mayReach applies the scopes' rule.
func mayReach(p httpapi.Principal, st ledger.Status, want reach) bool {
	switch {
	case p.Has(httpapi.ScopeOperate), st.From != "" && st.From == p.Name:
		return true
	}
	return want == reachRead && st.From == ""
}

func (a *api) getMessage(w http.ResponseWriter, r *http.Request) {
	if st, ok := a.lookup(w, r, r.PathValue("id"), reachRead); ok {
		httpapi.WriteJSON(w, http.StatusOK, st)
	}
}

// findMessage answers GET /v1/messages?idempotency_key=K: the message the
// request's token sent with that key.
func (a *api) findMessage(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("idempotency_key")
	if key == "" {
		key = r.Header.Get("Idempotency-Key")
	}
	if key == "" {
		httpapi.WriteError(w, httpapi.Invalid("say which message", jobs.FieldError{Field: "idempotency_key", Message: "is required: GET /v1/messages?idempotency_key=KEY, or GET /v1/messages/{id}"}))
		return
	}
	p, _ := httpapi.PrincipalFrom(r.Context())
	if st, ok := a.lookup(w, r, jobs.IdempotencyID(p.Name, key), reachRead); ok {
		httpapi.WriteJSON(w, http.StatusOK, st)
	}
}

// mayAct is the check Cancel and Retry apply to the message they find.
func mayAct(r *http.Request) func(ledger.Status) bool {
	p, _ := httpapi.PrincipalFrom(r.Context())
	return func(st ledger.Status) bool { return mayReach(p, st, reachAct) }
}

func (a *api) cancelMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, _ := httpapi.PrincipalFrom(r.Context())
	st, err := a.cfg.Messages.Cancel(r.Context(), id, p.Name, mayAct(r))
	switch {
	case err != nil:
		a.ledgerError(w, id, err)
	case st.Cancelling:
		// A worker holds it: it settles as cancelled at its next check,
		// unless its send began.
		httpapi.WriteJSON(w, http.StatusAccepted, st)
	default:
		httpapi.WriteJSON(w, http.StatusOK, st)
	}
}

func (a *api) retryMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, err := a.cfg.Messages.Retry(r.Context(), id, mayAct(r))
	if err != nil {
		a.ledgerError(w, id, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusAccepted, st)
}

// retryFailed answers POST /v1/messages/retry: the failed messages a
// filter picks are run again.
func (a *api) retryFailed(w http.ResponseWriter, r *http.Request) {
	var f ledger.Filter
	if r.ContentLength != 0 {
		if !httpapi.ReadJSON(w, r, a.cfg.MaxBodyBytes, &f) {
			return
		}
	}
	if f.Limit < 0 || f.Limit > ledger.MaxRetryLimit {
		httpapi.WriteError(w, httpapi.Invalid("invalid filter", jobs.FieldError{Field: "limit", Message: "must be between 1 and 10000 (0: 1000); call again for more"}))
		return
	}
	if qs := a.cfg.Messages.Queues(); f.Queue != "" && !slices.Contains(qs, f.Queue) {
		httpapi.WriteError(w, httpapi.Invalid("invalid filter", jobs.FieldError{Field: "queue", Message: "is not one of " + strings.Join(qs, ", ")}))
		return
	}
	out, err := a.cfg.Messages.RetryFailed(r.Context(), f)
	if err != nil {
		a.ledgerError(w, "", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// tooLateBody is a 409's body: the error and the message's status.
type tooLateBody struct {
	httpapi.ErrorBody
	Status ledger.Status `json:"message"`
}

// ledgerError answers a ledger error: 404 for an unknown message, 409 with
// the message's status when it is too late, 503 when Redis failed.
func (a *api) ledgerError(w http.ResponseWriter, id string, err error) {
	var late *ledger.TooLateError
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no message %s that this token may see: unknown, or settled longer ago than %s", id, ledger.EnvRetention))
	case errors.As(err, &late):
		httpapi.WriteJSON(w, http.StatusConflict, tooLateBody{
			ErrorBody: httpapi.ErrorBody{Error: httpapi.ErrorDetail{Code: httpapi.CodeTooLate, Message: "too late: " + late.Why}},
			Status:    late.Status})
	default:
		a.cfg.Logger.Error("message ledger unavailable", "id", id, "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "the message ledger is unavailable; retry later"))
	}
}
