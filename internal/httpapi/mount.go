package httpapi

import "net/http"

// Mount is one endpoint of the producer's API, served by the domain package
// that owns it. A package exports its endpoints as a Mounts function (or
// method) returning []Mount; internal/app adds them to the producer's
// mux with one line, and the mux puts each behind its scope.
type Mount struct {
	// Pattern is a net/http ServeMux pattern, e.g. "POST /v1/alerts".
	Pattern string
	// Handler serves it.
	Handler http.Handler
	// SelfAuth marks handlers that authenticate requests themselves
	// (signed webhooks); all others are served behind a token.
	SelfAuth bool
	// Scope is what the token must carry; empty means ScopeSend.
	Scope Scope
	// Quota, when set, is the rate quota (quota.NameAlertsPerMinute) each
	// POST takes one of from its token.
	Quota string
}

// MethodNotAllowed answers 405 with the Allow header naming the methods
// the path takes (allow, such as "GET, POST").
func MethodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", allow)
		WriteError(w, Errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "use %s", allow))
	}
}

// NotFound answers 404 with msg, which should say where to look instead.
func NotFound(msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, Errorf(http.StatusNotFound, CodeNotFound, "%s", msg))
	}
}
