package inbound

import (
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
)

// identify looks a presented credential up as a Herald API token and
// returns the token's name. The comparison is the keyring's own (every
// token's digest, in constant time): the credential is handed to it as the
// bearer token of a request made for that purpose. An unknown credential
// is a 401, one without the send scope a 403; neither message holds it.
func (s *server) identify(secret string) (string, error) {
	k := s.cfg.Keyring
	if k.Open() {
		return "", nil
	}
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return "", httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeUnauthorized, "no credential: the tool must present a Herald API token where this format carries its key")
	}
	probe := &http.Request{Header: http.Header{"Authorization": {"Bearer " + secret}}}
	p, ok := k.Identify(probe)
	if !ok {
		return "", httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeUnauthorized, "the credential is not a Herald API token")
	}
	if !p.Has(httpapi.ScopeSend) {
		return "", httpapi.Errorf(http.StatusForbidden, httpapi.CodeForbidden, "token %q lacks the %q scope", p.Name, httpapi.ScopeSend)
	}
	return p.Name, nil
}

// bearerOrBasic returns the credential of an Authorization header: the
// bearer token, or the basic-auth password.
func bearerOrBasic(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	return ""
}
