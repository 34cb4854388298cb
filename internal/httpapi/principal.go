package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/quota"
)

// Scope is one kind of thing a credential may do. A token carries one or
// more; docs/SECURITY.md has the table of which endpoint needs which.
type Scope string

// The scopes.
const (
	// ScopeSend posts messages, alerts, webhooks and heartbeats, and reads
	// what the same token sent.
	ScopeSend Scope = "send"
	// ScopeOperate changes how the fleet treats messages that others sent:
	// silences, cancel and retry, chats, schedules.
	ScopeOperate Scope = "operate"
	// ScopeAdmin makes the web UI's changes: pause queues, run, archive
	// and delete tasks.
	ScopeAdmin Scope = "admin"
)

// AllScopes lists every scope, weakest first.
var AllScopes = []Scope{ScopeSend, ScopeOperate, ScopeAdmin}

// parseScope reads a scope's name.
func parseScope(s string) (Scope, error) {
	for _, sc := range AllScopes {
		if string(sc) == strings.TrimSpace(s) {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown scope %q: use %s", s, scopeNames(AllScopes))
}

func scopeNames(ss []Scope) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Principal is who made a request: the name of the token it presented (or
// "local" when authentication is off) and what that token may do. Herald
// records the name wherever it says who did something (a silence's
// created_by, logs), so it never comes from a request's body.
type Principal struct {
	// Name identifies the credential: "api" for HERALD_API_TOKEN, "admin"
	// for HERALD_ADMIN_TOKEN, a tokens file's name otherwise.
	Name string
	// Scopes are what it may do.
	Scopes []Scope
	// Paid says the token may spend the bot's Stars: its messages may go
	// as paid broadcasts (jobs.SendMessage.Paid).
	Paid bool
	// Quotas are the token's limits (internal/quota); the zero Limits of a
	// principal made elsewhere takes the defaults (Limits).
	Quotas quota.Limits
}

// Limits are p's quotas, defaults filled in.
func (p Principal) Limits() quota.Limits { return p.Quotas.WithDefaults() }

// localPrincipal is the caller when authentication is off (local mode):
// every scope, under the name "local".
var localPrincipal = Principal{Name: "local", Scopes: AllScopes, Paid: true}

// Has reports whether p carries scope s.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// String is the name and scopes, for logs.
func (p Principal) String() string { return p.Name + "[" + scopeNames(p.Scopes) + "]" }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal the request's authentication put on
// ctx; false when none did (a handler served without authentication).
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// requireScope wraps next so that it runs only for a request whose
// principal (put on its context by the authentication in front) carries
// scope; others get a 403 naming the scope. A request with no principal on
// its context is refused too: requireScope fails closed.
func requireScope(scope Scope, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalFrom(r.Context())
		if !ok || !p.Has(scope) {
			name := "this request"
			if ok {
				name = fmt.Sprintf("token %q", p.Name)
			}
			Forbidden(w, fmt.Sprintf("%s lacks the %q scope this needs: use a token that has it (docs/SECURITY.md)", name, scope))
			return
		}
		next.ServeHTTP(w, r)
	})
}
