package httpapi

import (
	"mime"
	"net/http"
	"strings"
)

// SameOrigin refuses, with a 403 cross_origin, every state-changing request
// (any method but GET, HEAD and OPTIONS) that a browser sent from another
// origin: a form or fetch on another site cannot make an authenticated
// browser (cached basic auth) or a local Herald without authentication
// change anything. It trusts the browser's Sec-Fetch-Site header, else
// compares Origin with Host (net/http's CrossOriginProtection). Requests
// with neither header — curl, Alertmanager, GitHub, every non-browser
// client — pass.
func SameOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, Errorf(http.StatusForbidden, CodeCrossOrigin,
			"cross-origin request refused: state-changing requests must come from this server's own pages or from a non-browser client"))
	}))
	return p.Handler(next)
}

// RequireJSON refuses POST requests whose Content-Type is not JSON
// (application/json or a +json type) with a 415, except under the path
// prefixes in except. Without authentication (local mode) this keeps pages
// of other origins from reaching the API with the "simple" requests a
// browser sends without asking: text/plain, form or multipart bodies, which
// is all a no-cors fetch or a form can send.
func RequireJSON(next http.Handler, except ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !hasPrefix(r.URL.Path, except) && !isJSON(r.Header.Get("Content-Type")) {
			WriteError(w, Errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
				"Content-Type %q refused: without authentication only application/json requests are accepted", r.Header.Get("Content-Type")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && (path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/")) {
			return true
		}
	}
	return false
}
