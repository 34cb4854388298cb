package chats

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// chatsAPI serves the blocked chats of the bots:
//
//	GET    /v1/chats/{bot}/{chat}         what Herald knows of the chat (send scope)
//	DELETE /v1/chats/{bot}/{chat}/block   clears its blocked mark (operate scope)
//
// The chat is a numeric id or an @username, as in a message.
type chatsAPI struct {
	store *Store
	bots  []string
	log   *slog.Logger
}

// Unblocked is the answer of DELETE .../block (and of `producer unblock`):
// the chat's state now, and whether it was marked blocked.
type Unblocked struct {
	State
	WasBlocked bool `json:"was_blocked"`
}

// Mounts are the routes of the blocked-chats API for the bots named
// (HERALD_BOTS) on store: reading a chat's state takes a sender's token,
// clearing its mark the operate scope (a sender's token would otherwise
// undo what Telegram said).
func Mounts(store *Store, bots []string, log *slog.Logger) []httpapi.Mount {
	if log == nil {
		log = slog.Default()
	}
	a := &chatsAPI{store: store, bots: slices.Clone(bots), log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/chats/{bot}/{chat}", a.get)
	mux.HandleFunc("DELETE /v1/chats/{bot}/{chat}/block", a.unblock)
	mux.HandleFunc("/v1/chats/{bot}/{chat}", httpapi.MethodNotAllowed("GET"))
	mux.HandleFunc("/v1/chats/{bot}/{chat}/block", httpapi.MethodNotAllowed("DELETE"))
	mux.HandleFunc("/", httpapi.NotFound("no such endpoint; see GET /v1/chats/{bot}/{chat} and DELETE /v1/chats/{bot}/{chat}/block"))
	return []httpapi.Mount{
		{Pattern: "GET /v1/chats/{bot}/{chat}", Handler: mux},
		{Pattern: "DELETE /v1/chats/{bot}/{chat}/block", Handler: mux, Scope: httpapi.ScopeOperate},
		{Pattern: "/v1/chats/", Handler: mux},
	}
}

// target reads the bot and chat of the path, answering 404 for a bot
// that is not one of HERALD_BOTS and 400 for a chat that is not one.
func (a *chatsAPI) target(w http.ResponseWriter, r *http.Request) (bot, chat string, ok bool) {
	bot = r.PathValue("bot")
	if !slices.Contains(a.bots, bot) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "no bot %q: HERALD_BOTS lists %s", bot, strings.Join(a.bots, ", ")))
		return "", "", false
	}
	bot, chat, err := Normalize(bot, r.PathValue("chat"))
	var ie *InvalidError
	if errors.As(err, &ie) {
		httpapi.WriteError(w, httpapi.Invalid("invalid chat", jobs.FieldError{Field: ie.Field,
			Message: ie.Message + "; use a numeric chat id or an @username, as in a message"}))
		return "", "", false
	}
	return bot, chat, err == nil
}

func (a *chatsAPI) get(w http.ResponseWriter, r *http.Request) {
	bot, chat, ok := a.target(w, r)
	if !ok {
		return
	}
	st, err := a.store.Get(r.Context(), bot, chat)
	if err != nil {
		a.unavailable(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (a *chatsAPI) unblock(w http.ResponseWriter, r *http.Request) {
	bot, chat, ok := a.target(w, r)
	if !ok {
		return
	}
	was, err := a.store.Unblock(r.Context(), bot, chat, SourceAPI)
	if err != nil {
		a.unavailable(w, err)
		return
	}
	by := ""
	if p, ok := httpapi.PrincipalFrom(r.Context()); ok {
		by = p.Name
	}
	a.log.Info("blocked mark cleared through the API", "bot", bot, "chat", chat, "was_blocked", was, "token", by)
	httpapi.WriteJSON(w, http.StatusOK, Unblocked{State: State{Bot: bot, Chat: chat}, WasBlocked: was})
}

// unavailable answers 503 after a Redis error.
func (a *chatsAPI) unavailable(w http.ResponseWriter, err error) {
	a.log.Warn("blocked chats unavailable; answering 503", "error", err)
	httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "Redis is unavailable; try again"))
}
