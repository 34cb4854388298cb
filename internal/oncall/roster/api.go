package roster

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/oncall"
)

// APIConfig configures the on-call API.
type APIConfig struct {
	// Roster answers who is on call and stores overrides. Required.
	Roster *Roster
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Mounts are the routes of the on-call API: GET /v1/oncall (who
// is on call now and next, per schedule; ?at= another time), GET
// /v1/oncall/{schedule} (one schedule, with its stored overrides), and
// POST /v1/oncall/{schedule}/overrides (an override, with the operate
// scope).
func Mounts(cfg APIConfig) ([]httpapi.Mount, error) {
	if cfg.Roster == nil {
		return nil, errors.New("roster: APIConfig.Roster is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &onCallAPI{cfg: cfg}
	return []httpapi.Mount{
		{Pattern: "GET /v1/oncall", Handler: http.HandlerFunc(h.list)},
		{Pattern: "GET /v1/oncall/{schedule}", Handler: http.HandlerFunc(h.one)},
		{Pattern: "POST /v1/oncall/{schedule}/overrides", Handler: http.HandlerFunc(h.override), Scope: httpapi.ScopeOperate},
	}, nil
}

type onCallAPI struct{ cfg APIConfig }

// userView is a user in the API.
type userView struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Username string `json:"username,omitempty"`
}

func viewUser(u oncall.User) userView { return userView{ID: u.ID, Name: u.Name, Username: u.Username} }

// turnView is someone's time on call; an end not in sight is left out.
type turnView struct {
	User  userView   `json:"user"`
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
}

func viewTurn(t *Turn) *turnView {
	if t == nil {
		return nil
	}
	v := &turnView{User: viewUser(t.User)}
	if !t.Start.IsZero() {
		s := t.Start.UTC()
		v.Start = &s
	}
	if !t.End.IsZero() {
		e := t.End.UTC()
		v.End = &e
	}
	return v
}

// statusView is a schedule's answer: on_call and next are null for nobody.
type statusView struct {
	Schedule  string         `json:"schedule"`
	Chat      string         `json:"chat,omitempty"`
	TimeZone  string         `json:"time_zone"`
	OnCall    *turnView      `json:"on_call"`
	Next      *turnView      `json:"next"`
	Overrides []overrideView `json:"overrides,omitempty"`
	At        time.Time      `json:"at"`
}

func viewStatus(st Status, at time.Time) statusView {
	return statusView{Schedule: st.Schedule, Chat: st.Chat, TimeZone: st.Location.String(), OnCall: viewTurn(st.Now), Next: viewTurn(st.Next), At: at.UTC()}
}

// overrideView is an override in the API.
type overrideView struct {
	User  userView  `json:"user"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// at is the time asked about: ?at= (RFC 3339), else now.
func (h *onCallAPI) at(w http.ResponseWriter, r *http.Request) (time.Time, bool) {
	v := r.URL.Query().Get("at")
	if v == "" {
		return h.cfg.Now(), true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		httpapi.WriteError(w, httpapi.Invalid("invalid query", jobs.FieldError{Field: "at", Message: "is not an RFC 3339 time such as 2026-03-29T09:00:00+02:00"}))
		return time.Time{}, false
	}
	return t, true
}

func (h *onCallAPI) list(w http.ResponseWriter, r *http.Request) {
	at, ok := h.at(w, r)
	if !ok {
		return
	}
	out := struct {
		Schedules []statusView `json:"schedules"`
	}{Schedules: []statusView{}}
	for _, name := range h.cfg.Roster.Names() {
		st, _, err := h.cfg.Roster.Status(r.Context(), name, at)
		if err != nil {
			h.fail(w, "reading the overrides", err)
			return
		}
		out.Schedules = append(out.Schedules, viewStatus(st, at))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (h *onCallAPI) one(w http.ResponseWriter, r *http.Request) {
	at, ok := h.at(w, r)
	if !ok {
		return
	}
	v, found := h.status(w, r, r.PathValue("schedule"), at)
	if found {
		httpapi.WriteJSON(w, http.StatusOK, v)
	}
}

// status writes the schedule's status with its stored overrides, or the
// error; found is false when it wrote an error.
func (h *onCallAPI) status(w http.ResponseWriter, r *http.Request, name string, at time.Time) (statusView, bool) {
	st, ok, err := h.cfg.Roster.Status(r.Context(), name, at)
	switch {
	case err != nil:
		h.fail(w, "reading the overrides", err)
		return statusView{}, false
	case !ok:
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no schedule %q; schedules: %s (the routing file's schedules:)",
			name, strings.Join(h.cfg.Roster.Names(), ", ")))
		return statusView{}, false
	}
	v := viewStatus(st, at)
	stored, err := h.cfg.Roster.Overrides.List(r.Context(), name)
	if err != nil {
		h.fail(w, "reading the overrides", err)
		return statusView{}, false
	}
	for _, o := range stored {
		v.Overrides = append(v.Overrides, overrideView{User: viewUser(o.User), Start: o.Start.UTC(), End: o.End.UTC()})
	}
	return v, true
}

// overrideRequest is the body of POST /v1/oncall/{schedule}/overrides.
type overrideRequest struct {
	// User is the user written out ({"id", "name", "username"}), or the id
	// or "@username" of a user of the schedule.
	User json.RawMessage `json:"user"`
	// Start defaults to now; exactly one of End and Duration is needed.
	Start    *time.Time `json:"start,omitempty"`
	End      *time.Time `json:"end,omitempty"`
	Duration string     `json:"duration,omitempty"`
}

func (h *onCallAPI) override(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("schedule")
	if _, ok, _ := h.cfg.Roster.Schedule(r.Context(), name); !ok {
		h.status(w, r, name, h.cfg.Now()) // writes the 404
		return
	}
	var req overrideRequest
	if !httpapi.ReadJSON(w, r, h.cfg.MaxBodyBytes, &req) {
		return
	}
	now := h.cfg.Now()
	ov, fields := h.readOverride(r, name, req, now)
	if len(fields) > 0 {
		httpapi.WriteError(w, httpapi.Invalid("invalid override", fields...))
		return
	}
	p, _ := httpapi.PrincipalFrom(r.Context())
	err := h.cfg.Roster.Overrides.Add(r.Context(), name, ov, p.Name, now)
	switch {
	case errors.Is(err, ErrTooManyOverrides):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusConflict, "too_many_overrides", "the schedule holds the most overrides that have not ended; wait for some to end"))
		return
	case err != nil:
		h.fail(w, "storing the override", err)
		return
	}
	h.cfg.Logger.Info("on-call override stored", "schedule", name, "user", ov.User.ID, "start", ov.Start, "end", ov.End, "by", p.Name)
	if v, ok := h.status(w, r, name, ov.Start); ok {
		httpapi.WriteJSON(w, http.StatusCreated, v)
	}
}

// readOverride checks the request; each problem names its field.
func (h *onCallAPI) readOverride(r *http.Request, schedule string, req overrideRequest, now time.Time) (oncall.Override, []jobs.FieldError) {
	var fields []jobs.FieldError
	bad := func(field, format string, args ...any) {
		fields = append(fields, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	ov := oncall.Override{Start: now}
	if req.Start != nil {
		ov.Start = *req.Start
	}
	switch {
	case req.End != nil && req.Duration != "":
		bad("end", "give end or duration, not both")
	case req.End != nil:
		ov.End = *req.End
	case req.Duration != "":
		d, err := time.ParseDuration(req.Duration)
		if err != nil || d <= 0 {
			bad("duration", "%q is not a positive duration such as 8h", req.Duration)
		}
		ov.End = ov.Start.Add(d)
	default:
		bad("end", "is required (or duration): when the override ends, RFC 3339")
	}
	if !ov.End.IsZero() && !ov.End.After(ov.Start) {
		bad("end", "is not after start")
	}
	if !ov.End.IsZero() && !ov.End.After(now) {
		bad("end", "is in the past: the override would never apply")
	}
	u, msg := h.user(r, schedule, req.User)
	if msg != "" {
		bad("user", "%s", msg)
	}
	ov.User = u
	return ov, fields
}

// user reads the override's user; msg says what is wrong with it.
func (h *onCallAPI) user(r *http.Request, schedule string, raw json.RawMessage) (oncall.User, string) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return oncall.User{}, `is required: {"id": 12345, "name": "Alice"}, or the id or "@username" of a user of the schedule`
	}
	if strings.HasPrefix(s, "{") {
		var v userView
		if err := json.Unmarshal(raw, &v); err != nil {
			return oncall.User{}, "is not a user object: " + err.Error()
		}
		u := oncall.User{ID: v.ID, Name: v.Name, Username: strings.TrimPrefix(v.Username, "@")}
		if err := u.Validate(); err != nil {
			return oncall.User{}, err.Error()
		}
		return u, ""
	}
	ref := s
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &ref); err != nil {
			return oncall.User{}, "is not a string"
		}
	} else if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return oncall.User{}, "is neither a user object, an id nor an \"@username\""
	}
	u, ok, err := h.cfg.Roster.User(r.Context(), schedule, ref)
	switch {
	case err != nil:
		return oncall.User{}, "could not be looked up: " + err.Error()
	case !ok:
		return oncall.User{}, fmt.Sprintf("%s names no user of the schedule %q; write the user out as {\"id\": 12345, \"name\": \"Alice\"}", ref, schedule)
	}
	return u, ""
}

// fail answers a Redis failure with 503 (the caller retries) or 500.
func (h *onCallAPI) fail(w http.ResponseWriter, what string, err error) {
	h.cfg.Logger.Error("on-call API: "+what+" failed", "error", err)
	if errors.Is(err, jobs.ErrUnavailable) {
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "%s failed; retry", what))
		return
	}
	httpapi.WriteError(w, httpapi.Errorf(http.StatusInternalServerError, httpapi.CodeInternal, "%s failed", what))
}
