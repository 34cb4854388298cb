package silences

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// codeTooManySilences is the error code of the 409 refusing a silence
// beyond Config.MaxSilences.
const codeTooManySilences = "too_many_silences"

// view is a silence as the API shows it: the record and its state now.
type view struct {
	Silence
	State state `json:"state"`
}

// list is the body of GET /v1/silences: one page.
type list struct {
	Silences []view `json:"silences"`
	// NextCursor, when set, asks for the next page (?cursor=).
	NextCursor string `json:"next_cursor,omitempty"`
}

// caughtList is the body of GET /v1/silences/{id}/alerts.
type caughtList struct {
	SilenceID string   `json:"silence_id"`
	Alerts    []caught `json:"alerts"`
}

// createRequest is the body of POST /v1/silences. Times are read as text
// so that a bad one is reported under its field's name. CreatedBy is read
// only to refuse one that is not the caller's name.
type createRequest struct {
	Matchers  []Matcher `json:"matchers"`
	All       bool      `json:"all"`
	StartsAt  string    `json:"starts_at"`
	EndsAt    string    `json:"ends_at"`
	Duration  string    `json:"duration"`
	Comment   string    `json:"comment"`
	CreatedBy string    `json:"created_by"`
}

// input turns the body into an Input, naming the fields it cannot read.
func (r *createRequest) input() (Input, []jobs.FieldError) {
	in := Input{Matchers: r.Matchers, All: r.All, Comment: r.Comment}
	var fields []jobs.FieldError
	parseTime := func(field, s string) time.Time {
		if strings.TrimSpace(s) == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
		if err != nil {
			fields = append(fields, jobs.FieldError{Field: field, Message: "must be an RFC 3339 time such as 2026-01-02T15:04:05Z"})
		}
		return t
	}
	in.StartsAt = parseTime("starts_at", r.StartsAt)
	in.EndsAt = parseTime("ends_at", r.EndsAt)
	if d := strings.TrimSpace(r.Duration); d != "" {
		v, err := time.ParseDuration(d)
		if err != nil {
			fields = append(fields, jobs.FieldError{Field: "duration", Message: "must be a duration such as \"90m\" or \"2h\""})
		}
		in.Duration = v
	}
	return in, fields
}

// Handler returns the silences API:
//
//	POST   /v1/silences              create a silence: 201 with it
//	GET    /v1/silences              a page of the silences in force and to come (?state=active|pending|expired|all, ?limit=100, ?cursor=)
//	GET    /v1/silences/{id}         one silence
//	DELETE /v1/silences/{id}         expire it now: 200 with it
//	GET    /v1/silences/{id}/alerts  the alerts it caught, newest first (?limit=100)
//
// It does no authentication itself: mount it, on both "/v1/silences" and
// "/v1/silences/", behind the authentication that puts an
// httpapi.Principal on the request's context. A silence's created_by is
// that principal's name, "all": true needs its operate scope, and a
// request without a principal is refused with 403.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/silences", s.create)
	mux.HandleFunc("GET /v1/silences", s.list)
	mux.HandleFunc("GET /v1/silences/{id}", s.get1)
	mux.HandleFunc("DELETE /v1/silences/{id}", s.expire)
	mux.HandleFunc("GET /v1/silences/{id}/alerts", s.caught)
	mux.HandleFunc("/v1/silences", httpapi.MethodNotAllowed("GET, POST"))
	mux.HandleFunc("/v1/silences/{id}", httpapi.MethodNotAllowed("GET, DELETE"))
	mux.HandleFunc("/v1/silences/{id}/alerts", httpapi.MethodNotAllowed("GET"))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no such endpoint; see /v1/silences"))
	})
	return requirePrincipal(mux)
}

// Mounts are the silences API's routes (Handler), behind the operate
// scope: silences mute what others send, which a sender's token may not.
func (s *Store) Mounts() []httpapi.Mount {
	h := s.Handler()
	return []httpapi.Mount{
		{Pattern: "/v1/silences", Handler: h, Scope: httpapi.ScopeOperate},
		{Pattern: "/v1/silences/", Handler: h, Scope: httpapi.ScopeOperate},
	}
}

// requirePrincipal refuses with 403 a request that no authentication put
// a principal on: the API records who creates a silence, so it fails
// closed.
func requirePrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := httpapi.PrincipalFrom(r.Context()); !ok || strings.TrimSpace(p.Name) == "" {
			httpapi.Forbidden(w, "this request carries no identity: serve the silences API behind Herald's authentication (docs/SECURITY.md)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fail answers an error of the store: 404, 409, 400 or 503.
func (s *Store) fail(w http.ResponseWriter, op, id string, err error) {
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		httpapi.WriteError(w, httpapi.Invalid("invalid silence", verr.Fields...))
	case errors.Is(err, errNotFound):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound,
			"no silence %q: it never existed, or it expired more than %v ago", id, s.cfg.Retention))
	case errors.Is(err, ErrTooMany):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusConflict, codeTooManySilences,
			"%d silences are in force or to come, the most this Herald keeps: expire some (DELETE /v1/silences/{id})", s.cfg.MaxSilences))
	case errors.Is(err, jobs.ErrUnavailable):
		s.cfg.Logger.Error("silence store unavailable; answering 503", "op", op, "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable,
			"the silence store is unavailable; retry later"))
	default:
		s.cfg.Logger.Error("silence request failed", "op", op, "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusInternalServerError, httpapi.CodeInternal, "%s failed", op))
	}
}

func (s *Store) view(sil Silence) view { return view{Silence: sil, State: sil.State(s.cfg.Now())} }

func (s *Store) create(w http.ResponseWriter, r *http.Request) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	var req createRequest
	if !httpapi.ReadJSON(w, r, s.cfg.MaxBodyBytes, &req) {
		return
	}
	in, fields := req.input()
	if by := strings.TrimSpace(req.CreatedBy); by != "" && by != p.Name {
		fields = append(fields, jobs.FieldError{Field: "created_by",
			Message: fmt.Sprintf("is set by Herald from the token's name %q; remove it", p.Name)})
	}
	if len(fields) > 0 {
		httpapi.WriteError(w, httpapi.Invalid("invalid silence", fields...))
		return
	}
	if in.All && !p.Has(httpapi.ScopeOperate) {
		httpapi.Forbidden(w, fmt.Sprintf("token %q lacks the %q scope that \"all\": true needs: use a token that has it (docs/SECURITY.md)",
			p.Name, httpapi.ScopeOperate))
		return
	}
	in.CreatedBy = p.Name
	sil, err := s.Create(r.Context(), in)
	if err != nil {
		s.fail(w, "creating the silence", "", err)
		return
	}
	w.Header().Set("Location", "/v1/silences/"+sil.ID)
	httpapi.WriteJSON(w, http.StatusCreated, s.view(sil))
}

func (s *Store) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := Filter(strings.TrimSpace(q.Get("state")))
	switch f {
	case FilterLive, FilterActive, filterPending, filterExpired, FilterAll:
	default:
		httpapi.WriteError(w, httpapi.Invalid("invalid query", jobs.FieldError{Field: "state",
			Message: fmt.Sprintf("%q is not one of active, pending, expired, all (leave it out for active and pending)", f)}))
		return
	}
	limit, herr := queryLimit(q.Get("limit"))
	if herr != nil {
		httpapi.WriteError(w, herr)
		return
	}
	page, err := s.ListPage(r.Context(), f, limit, q.Get("cursor"))
	if errors.Is(err, errBadCursor) {
		httpapi.WriteError(w, httpapi.Invalid("invalid query", jobs.FieldError{Field: "cursor",
			Message: strings.TrimPrefix(err.Error(), errBadCursor.Error()+": ") + "; pass the next_cursor of the previous page"}))
		return
	}
	if err != nil {
		s.fail(w, "listing silences", "", err)
		return
	}
	out := list{Silences: make([]view, len(page.Silences)), NextCursor: page.NextCursor}
	for i, sil := range page.Silences {
		out.Silences[i] = s.view(sil)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// queryLimit reads ?limit=: 1 to maxListLimit, default defaultListLimit.
func queryLimit(v string) (int, *httpapi.Error) {
	if v == "" {
		return defaultListLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxListLimit {
		return 0, httpapi.Invalid("invalid query", jobs.FieldError{Field: "limit",
			Message: fmt.Sprintf("must be a whole number from 1 to %d", maxListLimit)})
	}
	return n, nil
}

func (s *Store) get1(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sil, err := s.Get(r.Context(), id)
	if err != nil {
		s.fail(w, "reading the silence", id, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, s.view(sil))
}

func (s *Store) expire(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sil, err := s.Expire(r.Context(), id)
	if err != nil {
		s.fail(w, "expiring the silence", id, err)
		return
	}
	if p, ok := httpapi.PrincipalFrom(r.Context()); ok {
		s.cfg.Logger.Info("silence expired through the API", "silence", id, "by", p.Name)
	}
	httpapi.WriteJSON(w, http.StatusOK, s.view(sil))
}

func (s *Store) caught(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	limit, herr := queryLimit(r.URL.Query().Get("limit"))
	if herr != nil {
		httpapi.WriteError(w, herr)
		return
	}
	if _, err := s.Get(r.Context(), id); err != nil {
		s.fail(w, "reading the silence", id, err)
		return
	}
	list, err := s.Recorded(r.Context(), id, limit)
	if err != nil {
		s.fail(w, "reading the silenced alerts", id, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, caughtList{SilenceID: id, Alerts: list})
}
