package broadcast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/quota"
)

// broadcastsAPI serves broadcasts and the audiences
// they may name:
//
//	POST   /v1/broadcasts              one text to many chats; 202 once every message is stored
//	GET    /v1/broadcasts/{id}         its counts, Stars and ETA
//	DELETE /v1/broadcasts/{id}         cancels every message not sent yet
//	PUT    /v1/audiences/{name}        stores a chat list to broadcast to by name
//	DELETE /v1/audiences/{name}        removes it
//
// All take a sender's token. As with messages, a send-scope token reaches
// only its own broadcasts (others are answered as unknown) and its own
// audiences; the operate scope reaches every broadcast.
type broadcastsAPI struct {
	svc       *Service
	callbacks httpapi.URLChecker
	log       *slog.Logger
	quotas    *quota.Store
}

// broadcastRequest is the body of POST /v1/broadcasts.
type broadcastRequest struct {
	Bot string `json:"bot,omitempty"`
	// Chats are numeric ids (strings or numbers) or @usernames; Audience
	// names an uploaded list instead.
	Chats    []httpapi.ChatRef `json:"chats,omitempty"`
	Audience string            `json:"audience,omitempty"`
	// Text may hold {{name}} placeholders, filled per chat from Values
	// (keyed by chat) or Defaults, escaped for the parse mode.
	Text                string                       `json:"text"`
	Values              map[string]map[string]string `json:"values,omitempty"`
	Defaults            map[string]string            `json:"defaults,omitempty"`
	ParseMode           string                       `json:"parse_mode,omitempty"`
	DisableNotification bool                         `json:"disable_notification,omitempty"`
	DisableLinkPreview  bool                         `json:"disable_link_preview,omitempty"`
	ProtectContent      bool                         `json:"protect_content,omitempty"`
	Photo               *jobs.Photo                  `json:"photo,omitempty"`
	Buttons             *jobs.Keyboard               `json:"buttons,omitempty"`
	CallbackURL         string                       `json:"callback_url,omitempty"`
	IdempotencyKey      string                       `json:"idempotency_key,omitempty"`
}

// audienceRequest is the body of PUT /v1/audiences/{name}.
type audienceRequest struct {
	Chats []httpapi.ChatRef `json:"chats"`
}

// Mounts are the broadcasts' routes on svc, behind a sender's token;
// callbacks checks a broadcast's callback_url as POST /v1/messages checks a
// message's (nil refuses every callback_url). quotas, when set, counts
// each token's broadcasts, queued recipients and audiences (nil: none).
func Mounts(svc *Service, callbacks httpapi.URLChecker, log *slog.Logger, quotas *quota.Store) []httpapi.Mount {
	if log == nil {
		log = slog.Default()
	}
	a := &broadcastsAPI{svc: svc, callbacks: callbacks, log: log, quotas: quotas}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/broadcasts", a.create)
	mux.HandleFunc("GET /v1/broadcasts/{id}", a.get)
	mux.HandleFunc("DELETE /v1/broadcasts/{id}", a.cancel)
	mux.HandleFunc("PUT /v1/audiences/{name}", a.putAudience)
	mux.HandleFunc("DELETE /v1/audiences/{name}", a.deleteAudience)
	mux.HandleFunc("/v1/broadcasts", httpapi.MethodNotAllowed("POST"))
	mux.HandleFunc("/v1/broadcasts/{id}", httpapi.MethodNotAllowed("GET, DELETE"))
	mux.HandleFunc("/v1/audiences/{name}", httpapi.MethodNotAllowed("PUT, DELETE"))
	mux.HandleFunc("/", httpapi.NotFound("no such endpoint; see POST /v1/broadcasts, GET|DELETE /v1/broadcasts/{id}, PUT|DELETE /v1/audiences/{name}"))
	return []httpapi.Mount{{Pattern: "/v1/broadcasts", Handler: mux}, {Pattern: "/v1/broadcasts/", Handler: mux}, {Pattern: "/v1/audiences/", Handler: mux}}
}

func (a *broadcastsAPI) create(w http.ResponseWriter, r *http.Request) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	if err := a.quotas.Bulk(); err != nil {
		httpapi.RefuseBulk(w, err)
		return
	}
	var body broadcastRequest
	if !a.decode(w, r, &body) {
		return
	}
	key, herr := idempotencyKey(r, body.IdempotencyKey)
	if herr == nil {
		herr = httpapi.CheckCallbackURL(a.callbacks, body.CallbackURL)
	}
	if herr != nil {
		httpapi.WriteError(w, herr)
		return
	}
	adm := a.admission(w, r, len(body.Text))
	res, err := a.svc.Create(r.Context(), Request{Bot: body.Bot, Chats: httpapi.ChatStrings(body.Chats), Audience: body.Audience,
		Text: body.Text, Values: body.Values, Defaults: body.Defaults, ParseMode: body.ParseMode,
		DisableNotification: body.DisableNotification, DisableLinkPreview: body.DisableLinkPreview, ProtectContent: body.ProtectContent,
		Photo: body.Photo, Buttons: body.Buttons, CallbackURL: body.CallbackURL, IdempotencyKey: key, From: p.Name, Paid: p.Paid, Admit: adm.admit})
	adm.settle(r.Context(), res, err)
	if adm.answered {
		return
	}
	if err != nil {
		a.fail(w, "invalid broadcast", err)
		return
	}
	if res.Duplicate {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	a.log.Info("broadcast accepted", "broadcast_id", res.ID, "queued", res.Queued, "blocked", res.Blocked, "duplicate", res.Duplicate, "token", p.Name)
	httpapi.WriteJSON(w, http.StatusAccepted, res)
}

// idempotencyKey is the request's key: its header or its body's, which
// must agree when both are given.
func idempotencyKey(r *http.Request, body string) (string, *httpapi.Error) {
	h := r.Header.Get("Idempotency-Key")
	switch {
	case h == "":
		return body, nil
	case body != "" && body != h:
		return "", httpapi.Invalid("conflicting idempotency keys",
			jobs.FieldError{Field: "idempotency_key", Message: "differs from the Idempotency-Key header; send one or make them equal"})
	case len(h) > 256:
		return "", httpapi.Invalid("invalid broadcast", jobs.FieldError{Field: "idempotency_key", Message: "is " + strconv.Itoa(len(h)) + " bytes long; the limit is 256"})
	}
	return h, nil
}

// mayReachBroadcast is the scopes' rule for a broadcast sent by from.
func mayReachBroadcast(r *http.Request) func(from string) bool {
	p, _ := httpapi.PrincipalFrom(r.Context())
	return func(from string) bool { return p.Has(httpapi.ScopeOperate) || from == p.Name }
}

func (a *broadcastsAPI) get(w http.ResponseWriter, r *http.Request) {
	st, err := a.svc.Status(r.Context(), r.PathValue("id"), mayReachBroadcast(r))
	if err != nil {
		a.fail(w, "", err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (a *broadcastsAPI) cancel(w http.ResponseWriter, r *http.Request) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	st, err := a.svc.Cancel(r.Context(), r.PathValue("id"), p.Name, mayReachBroadcast(r))
	if err != nil {
		a.fail(w, "", err)
		return
	}
	a.log.Info("broadcast cancelled", "broadcast_id", st.ID, "cancelling", st.Cancelling, "token", p.Name)
	code := http.StatusOK
	if st.Cancelling > 0 {
		// The workers settle the marked messages as they reach them.
		code = http.StatusAccepted
	}
	httpapi.WriteJSON(w, code, st)
}

func (a *broadcastsAPI) putAudience(w http.ResponseWriter, r *http.Request) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	if err := a.quotas.Bulk(); err != nil {
		httpapi.RefuseBulk(w, err)
		return
	}
	var body audienceRequest
	if !a.decode(w, r, &body) {
		return
	}
	if !a.audienceFits(w, r, len(body.Chats)) {
		return
	}
	info, err := a.svc.PutAudience(r.Context(), p.Name, r.PathValue("name"), httpapi.ChatStrings(body.Chats))
	if err != nil {
		a.fail(w, "invalid audience", err)
		return
	}
	if !a.keepAudience(w, r) {
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, info)
}

func (a *broadcastsAPI) deleteAudience(w http.ResponseWriter, r *http.Request) {
	p, _ := httpapi.PrincipalFrom(r.Context())
	name := r.PathValue("name")
	was, err := a.svc.DeleteAudience(r.Context(), p.Name, name)
	switch {
	case err != nil:
		a.fail(w, "invalid audience", err)
	case !was:
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no audience %q of this token", name))
	default:
		a.dropAudience(r, name)
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"name": name, "deleted": true})
	}
}

// decode reads a request body within the broadcasts' body limit,
// answering the error itself.
func (a *broadcastsAPI) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	// Lists are counted before they are decoded: a body of millions of
	// chats costs a scan, not their decoding.
	hint := fmt.Sprintf(" (%s): split the broadcast", EnvMaxChats)
	// A bad chat is refused as it arrives, before the rest of the list;
	// an entry over 6 bytes (\uXXXX) per byte a chat may take is one.
	chats := httpapi.Bound{Max: a.svc.MaxChats(), Hint: hint, Entry: chatEntry, MaxEntryBytes: 6 * jobs.MaxChatBytes}
	bounds := map[string]httpapi.Bound{"chats": chats, "values": {Max: a.svc.MaxChats(), Hint: hint},
		// A text too long for any message is refused once its units pass
		// the limit, before the rest is read or decoded.
		"text": {MaxUnits: a.svc.MaxTextLen(), Hint: fmt.Sprintf(" (%s), placeholders included", jobs.EnvMaxTextLen)}}
	if err := httpapi.DecodeJSONBounded(w, r, a.svc.MaxBodyBytes(), bounds, v); err != nil {
		var he *httpapi.Error
		errors.As(err, &he)
		httpapi.WriteError(w, he)
		return false
	}
	return true
}

// fail answers an error of the service: 400 naming the fields, 404, or
// 503 (with Retry-After when a retry may succeed).
func (a *broadcastsAPI) fail(w http.ResponseWriter, invalid string, err error) {
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		httpapi.WriteError(w, httpapi.Invalid(invalid, verr.Fields...))
	case errors.Is(err, ErrNotFound):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no broadcast that this token may see: unknown, or older than %s", ledger.EnvRetention))
	case errors.Is(err, ErrOff):
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "%s", err))
	case errors.Is(err, context.Canceled):
		// The client left: the work stopped; nobody reads the answer.
		a.log.Info("broadcast: the client left; its request stopped")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusRequestTimeout, "client_left", "the request was cancelled"))
	default:
		a.log.Error("broadcast: Redis failed; answering 503", "error", err)
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "Redis is unavailable; retry later (a broadcast with its Idempotency-Key: no chat gets its message twice)"))
	}
}
