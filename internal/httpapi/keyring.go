package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"

	"github.com/herald-dev/herald/internal/quota"
)

// Token is one credential of the API: a name that logs and records show, the
// scopes it carries, and the secret's SHA-256 digest (the secret itself is
// not kept).
type Token struct {
	Name   string
	Scopes []Scope
	// Quotas bound what the token may hold of the fleet's capacity; zero
	// fields take quota.DefaultLimits.
	Quotas quota.Limits
	// Paid lets the token spend the bot's Stars (tokens file: paid: true):
	// without it, its messages go at the free rate even while paid
	// broadcasts are on.
	Paid   bool
	digest [sha256.Size]byte
}

// NewToken returns the token whose secret is secret.
func NewToken(name, secret string, scopes ...Scope) Token {
	return Token{Name: name, Scopes: scopes, digest: sha256.Sum256([]byte(secret))}
}

// newHashedToken returns the token whose secret has the SHA-256 digest sum,
// for a tokens file that holds digests rather than secrets.
func newHashedToken(name string, sum [sha256.Size]byte, scopes ...Scope) Token {
	return Token{Name: name, Scopes: scopes, digest: sum}
}

// validTokenName is what a token's name may be: it lands in logs, in a
// silence's created_by and in thread namespaces, which separate with "/".
var validTokenName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// isTokenName reports whether name may name a token: 1 to 32 of a-z,
// 0-9, _ and -, starting with a letter or digit.
func isTokenName(name string) bool { return validTokenName.MatchString(name) }

// Keyring holds the API's tokens and tells who presented which. An open
// keyring (OpenKeyring) stands for authentication turned off: every request
// is localPrincipal.
type Keyring struct {
	tokens []Token
	open   bool
}

// NewKeyring returns a keyring of tokens. Names must be valid and distinct,
// every token needs a scope, and no two tokens may share a secret (one
// secret must mean one identity). It needs at least one token.
func NewKeyring(tokens ...Token) (*Keyring, error) {
	if len(tokens) == 0 {
		return nil, errors.New("no API token is configured: set HERALD_API_TOKEN or HERALD_TOKENS_FILE, or HERALD_AUTH_DISABLED=true for local use")
	}
	var errs []error
	for i, t := range tokens {
		switch {
		case !isTokenName(t.Name):
			errs = append(errs, fmt.Errorf("token name %q: use 1 to 32 of a-z, 0-9, _ and -", t.Name))
		case len(t.Scopes) == 0:
			errs = append(errs, fmt.Errorf("token %q has no scope: give it one or more of %s", t.Name, scopeNames(AllScopes)))
		}
		for _, u := range tokens[:i] {
			if u.Name == t.Name {
				errs = append(errs, fmt.Errorf("token name %q is used twice: name each token once", t.Name))
			}
			if u.digest == t.digest {
				errs = append(errs, fmt.Errorf("tokens %q and %q have the same secret: generate a secret of its own for each", u.Name, t.Name))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Keyring{tokens: slices.Clone(tokens)}, nil
}

// OpenKeyring returns the keyring of a server without authentication
// (local mode): every request is localPrincipal.
func OpenKeyring() *Keyring { return &Keyring{open: true} }

// Open reports whether k is an open keyring.
func (k *Keyring) Open() bool { return k.open }

// Names lists the tokens' names, for the start-up log line.
func (k *Keyring) Names() []string {
	names := make([]string, len(k.tokens))
	for i, t := range k.tokens {
		names[i] = t.Name
	}
	return names
}

// Identify returns the principal of the token r presents (bearer or
// basic-auth password); false when it presents none the keyring holds. The
// presented secret is compared with every token's digest in constant time,
// all of them every time.
func (k *Keyring) Identify(r *http.Request) (Principal, bool) {
	if k.open {
		return localPrincipal, true
	}
	got := presentedToken(r)
	if got == "" {
		return Principal{}, false
	}
	sum := sha256.Sum256([]byte(got))
	found := -1
	for i := range k.tokens {
		if subtle.ConstantTimeCompare(sum[:], k.tokens[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, false
	}
	t := k.tokens[found]
	return Principal{Name: t.Name, Scopes: t.Scopes, Quotas: t.Quotas.WithDefaults(), Paid: t.Paid}, true
}

// Require wraps next so that it runs only for a request presenting a token
// that carries scope: 401 without a known token, 403 with one that lacks
// the scope. next finds the principal with PrincipalFrom.
func (k *Keyring) Require(scope Scope, next http.Handler) http.Handler {
	return k.Authenticate(requireScope(scope, next))
}

// Authenticate wraps next so that it runs only for a request presenting a
// known token, with its principal on the request's context (401
// otherwise). Scopes are next's to check (requireScope).
func (k *Keyring) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := k.Identify(r)
		if !ok {
			Unauthorized(w, "missing or wrong API token: send Authorization: Bearer <token>, the token being HERALD_API_TOKEN or one of HERALD_TOKENS_FILE")
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// Grants reports whether some request may carry scope: a token of k has it,
// or k is open.
func (k *Keyring) Grants(s Scope) bool {
	if k.open {
		return true
	}
	return slices.ContainsFunc(k.tokens, func(t Token) bool { return slices.Contains(t.Scopes, s) })
}
