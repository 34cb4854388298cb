package producer

import (
	"net/http"

	"github.com/herald-dev/herald/internal/httpapi"
)

// monitoring serves the web UI by credential: the admin token gets the
// read-write UI, the API token (which every sender holds) the read-only one
// and a 403 for anything that could change state. Without an admin token
// (or a read-write UI) everyone reads only. Without authentication (local
// mode) everyone gets the read-write UI; cross-origin requests are refused
// for everyone by httpapi.SameOrigin.
func (a *API) monitoring() http.Handler {
	ro, rw := a.cfg.Monitoring, a.cfg.MonitoringAdmin
	if rw == nil {
		rw = ro
	}
	if a.cfg.AuthDisabled {
		return rw
	}
	admin := a.cfg.AdminToken
	if admin == "" {
		rw = ro
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := httpapi.PresentedToken(r)
		switch {
		case httpapi.TokenMatches(tok, admin):
			rw.ServeHTTP(w, r)
		case httpapi.TokenMatches(tok, a.cfg.APIToken):
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				msg := "the API token only reads the web UI: log in with the admin token (HERALD_ADMIN_TOKEN) to change anything"
				if admin == "" {
					msg = "the web UI is read-only: set HERALD_ADMIN_TOKEN and log in with it to change anything"
				}
				httpapi.Forbidden(w, msg)
				return
			}
			ro.ServeHTTP(w, r)
		default:
			httpapi.Unauthorized(w, "missing or wrong token: log in with the API token (read-only) or the admin token (basic auth, the token as password)")
		}
	})
}

// metrics serves /metrics, behind MetricsToken when one is set.
func (a *API) metrics() http.Handler {
	if a.cfg.MetricsToken == "" {
		return a.cfg.Metrics
	}
	return httpapi.RequireToken(a.cfg.MetricsToken, a.cfg.Metrics)
}
