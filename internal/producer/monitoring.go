package producer

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
)

// monitoring serves the web UI by credential: a token with the admin scope
// gets the read-write UI, one with the operate scope the read-only one and
// a 403 for anything that could change state, and a sender's token the
// UI's pages and the queues' counts, never a message (monitoringscope.go). Without a read-write UI
// everyone reads only. Without authentication (local mode) everyone gets
// the read-write UI; cross-origin requests are refused for everyone by
// httpapi.SameOrigin.
func (a *api) monitoring() http.Handler {
	ro, rw := a.cfg.Monitoring, a.cfg.MonitoringAdmin
	if rw == nil {
		rw = ro // read-only mode: the UI itself refuses every change
	}
	k, root := a.cfg.Keyring, strings.TrimSuffix(a.cfg.MonitoringPath, "/")
	if k.Open() {
		return rw
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := k.Identify(r)
		switch {
		case !ok:
			httpapi.Unauthorized(w, "missing or wrong token: log in with an API token (basic auth, the token as password); one with the admin scope may change things")
		case p.Has(httpapi.ScopeAdmin):
			rw.ServeHTTP(w, r)
		case !p.Has(httpapi.ScopeOperate) && !countsOnly(strings.TrimPrefix(r.URL.Path, root)):
			payloadsNeedOperate(w, p.Name)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			msg := fmt.Sprintf("token %q only reads the web UI: log in with a token that has the admin scope (HERALD_ADMIN_TOKEN) to change anything", p.Name)
			if !k.Grants(httpapi.ScopeAdmin) {
				msg = "the web UI is read-only: set HERALD_ADMIN_TOKEN (or a tokens file entry with the admin scope) and log in with it to change anything"
			}
			httpapi.Forbidden(w, msg)
		default:
			ro.ServeHTTP(w, r)
		}
	})
}

// metrics serves /metrics, behind MetricsToken when one is set.
func (a *api) metrics() http.Handler {
	if a.cfg.MetricsToken == "" {
		return a.cfg.Metrics
	}
	return httpapi.RequireToken(a.cfg.MetricsToken, a.cfg.Metrics)
}
