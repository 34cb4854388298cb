package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// presentedToken returns the credential a request carries: the bearer
// token, or else the basic-auth password (browsers and senders such as
// Alertmanager that only speak basic auth put the token there).
func presentedToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	return ""
}

// TokenMatches compares a presented token with the expected one in
// constant time; an empty expected token never matches.
func TokenMatches(got, want string) bool {
	if want == "" || got == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// RequireToken wraps next so that it runs only for requests presenting
// token (bearer or basic-auth password). Others get a 401 JSON error.
func RequireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !TokenMatches(presentedToken(r), token) {
			Unauthorized(w, "missing or wrong API token: send Authorization: Bearer <token>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// challenges are the WWW-Authenticate headers of a 401: one header per
// scheme. Browsers parse a header as one challenge, so "Bearer ..., Basic
// ..." on one line hides the Basic challenge and Chromium shows no login
// prompt; Basic comes first for the same reason.
var challenges = []string{`Basic realm="herald", charset="UTF-8"`, `Bearer realm="herald"`}

// Unauthorized writes a 401 with the authentication schemes Herald accepts.
func Unauthorized(w http.ResponseWriter, msg string) {
	w.Header()["Www-Authenticate"] = append([]string(nil), challenges...)
	WriteError(w, Errorf(http.StatusUnauthorized, CodeUnauthorized, "%s", msg))
}

// Forbidden writes a 403: the credential is valid but does not allow this.
func Forbidden(w http.ResponseWriter, msg string) {
	WriteError(w, Errorf(http.StatusForbidden, CodeForbidden, "%s", msg))
}
