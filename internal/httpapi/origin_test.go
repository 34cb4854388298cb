package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSameOrigin sends state-changing requests as browsers on this and
// other origins send them, and as non-browser clients do.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	h := SameOrigin(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	tests := []struct {
		name, method string
		header       map[string]string
		want         int
	}{
		{"curl", http.MethodPost, nil, 204},
		{"same-origin fetch", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://herald.test"}, 204},
		{"typed URL", http.MethodPost, map[string]string{"Sec-Fetch-Site": "none"}, 204},
		{"cross-site form", http.MethodPost, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.test"}, 403},
		{"same-site other host", http.MethodDelete, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other.herald.test"}, 403},
		{"old browser, other origin", http.MethodPut, map[string]string{"Origin": "http://evil.test"}, 403},
		{"old browser, same origin", http.MethodPost, map[string]string{"Origin": "http://herald.test"}, 204},
		{"cross-site GET is safe", http.MethodGet, map[string]string{"Sec-Fetch-Site": "cross-site"}, 204},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, "http://herald.test/monitoring/api/queues/default:pause", nil)
		for k, v := range tc.header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.want, w.Body)
		}
		if w.Code == 403 && !strings.Contains(w.Body.String(), `"code":"cross_origin"`) {
			t.Errorf("%s: 403 body %s, want the cross_origin JSON error", tc.name, w.Body)
		}
	}
}

// TestRequireJSON checks the local mode's rule: POST only with JSON, except
// under the web UI's path; other methods pass.
func TestRequireJSON(t *testing.T) {
	t.Parallel()
	h := RequireJSON(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }), "/monitoring")
	tests := []struct {
		method, path, ct string
		want             int
	}{
		{http.MethodPost, "/v1/messages", "application/json", 204},
		{http.MethodPost, "/v1/messages", "application/json; charset=utf-8", 204},
		{http.MethodPost, "/v1/webhooks/alertmanager", "application/vnd.x+json", 204},
		{http.MethodPost, "/v1/messages", "text/plain", 415},
		{http.MethodPost, "/v1/messages", "application/x-www-form-urlencoded", 415},
		{http.MethodPost, "/v1/messages", "multipart/form-data; boundary=x", 415},
		{http.MethodPost, "/v1/heartbeats/backup", "", 415},
		{http.MethodPost, "/monitoring/api/queues/default:pause", "", 204},
		{http.MethodPost, "/monitoringx", "", 415},
		{http.MethodPut, "/v1/heartbeats/backup", "", 204},
		{http.MethodGet, "/v1/heartbeats", "", 204},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}"))
		if tc.ct != "" {
			r.Header.Set("Content-Type", tc.ct)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s %s (%q): status %d, want %d", tc.method, tc.path, tc.ct, w.Code, tc.want)
		}
	}
}

// TestUnauthorizedChallenges checks one WWW-Authenticate header per scheme,
// Basic first: a browser reads a header as one challenge.
func TestUnauthorizedChallenges(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	Unauthorized(w, "no")
	got := w.Header().Values("WWW-Authenticate")
	if len(got) != 2 || !strings.HasPrefix(got[0], "Basic ") || !strings.HasPrefix(got[1], "Bearer ") {
		t.Fatalf("WWW-Authenticate %q, want a Basic and then a Bearer header", got)
	}
	for _, c := range got {
		if strings.Contains(c, ",") && strings.Count(c, "realm") > 1 {
			t.Errorf("challenge %q holds two schemes", c)
		}
	}
}
