package producer_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/producer"
)

const testAdminToken = "admin-token-for-the-web-ui"

// uiStub answers with its name, so a test sees which UI served a request.
func uiStub(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(name + " " + r.Method))
	})
}

func withUI(tb testing.TB, admin string) func(*producer.Config) {
	return func(c *producer.Config) {
		c.Monitoring, c.MonitoringAdmin, c.MonitoringPath = uiStub("read-only"), uiStub("read-write"), "/monitoring"
		c.Keyring = testKeyring(tb, testToken, admin)
	}
}

// TestMonitoringCredentials checks who gets which web UI: the API token
// (every sender's credential) reads only and gets a 403 for any change,
// the admin token gets the read-write UI, and without an admin token
// nobody changes anything.
func TestMonitoringCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, admin, method, token string
		want                       int
		served                     string // the UI that answered, on a 200
	}{
		{"sender reads", testAdminToken, http.MethodGet, testToken, 200, "read-only"},
		{"sender pauses a queue", testAdminToken, http.MethodPost, testToken, 403, ""},
		{"sender deletes a task", testAdminToken, http.MethodDelete, testToken, 403, ""},
		{"sender runs a task", testAdminToken, http.MethodPost, testToken, 403, ""},
		{"admin reads", testAdminToken, http.MethodGet, testAdminToken, 200, "read-write"},
		{"admin pauses a queue", testAdminToken, http.MethodPost, testAdminToken, 200, "read-write"},
		{"admin deletes a task", testAdminToken, http.MethodDelete, testAdminToken, 200, "read-write"},
		{"wrong token", testAdminToken, http.MethodGet, "nope", 401, ""},
		{"no admin token: sender reads", "", http.MethodGet, testToken, 200, "read-only"},
		{"no admin token: sender changes", "", http.MethodPost, testToken, 403, ""},
		{"no admin token: empty token is no admin", "", http.MethodPost, "", 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := newTestAPI(t, withUI(t, tc.admin))
			r := request{method: tc.method, path: "/monitoring/api/queues/default:pause", noAuth: true}
			if tc.token != "" {
				r.header = hdr("Authorization", basicAuth("herald", tc.token))
			}
			rec := do(h, r)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			switch tc.want {
			case 200:
				if got := rec.Body.String(); got != tc.served+" "+tc.method {
					t.Fatalf("served by %q, want the %s UI", got, tc.served)
				}
			case 403:
				eb := errorBody(t, rec, http.StatusForbidden, httpapi.CodeForbidden)
				if !strings.Contains(eb.Error.Message, "HERALD_ADMIN_TOKEN") {
					t.Errorf("403 message %q does not name HERALD_ADMIN_TOKEN", eb.Error.Message)
				}
			case 401:
				if got := rec.Header().Values("WWW-Authenticate"); len(got) != 2 || !strings.HasPrefix(got[0], "Basic ") {
					t.Errorf("401 challenges %q, want a Basic header and a Bearer header", got)
				}
			}
		})
	}
}

func basicAuth(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// TestCrossOriginRefused sends, with valid credentials, what a page on
// another site can make a browser send: every state-changing request is
// refused with a 403 and changes nothing; the same requests from the
// server's own pages and from non-browser clients pass.
func TestCrossOriginRefused(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, withUI(t, testAdminToken))
	admin := basicAuth("herald", testAdminToken)
	cross := hdr("Sec-Fetch-Site", "cross-site", "Origin", "http://evil.test", "Authorization", admin)
	rec := do(h, request{path: "/monitoring/api/queues/default:pause", noAuth: true, header: cross})
	errorBody(t, rec, http.StatusForbidden, httpapi.CodeCrossOrigin)

	crossAPI := hdr("Sec-Fetch-Site", "cross-site", "Origin", "http://evil.test", "Content-Type", "text/plain")
	errorBody(t, do(h, request{body: `{"chat":"42","text":"x"}`, header: crossAPI}), http.StatusForbidden, httpapi.CodeCrossOrigin)
	oldBrowser := hdr("Origin", "http://evil.test")
	errorBody(t, do(h, request{body: `{"chat":"42","text":"x"}`, header: oldBrowser}), http.StatusForbidden, httpapi.CodeCrossOrigin)
	b.requireNoTasks(t)

	same := hdr("Sec-Fetch-Site", "same-origin", "Origin", "http://127.0.0.1", "Authorization", admin)
	if rec := do(h, request{path: "/monitoring/api/queues/default:pause", noAuth: true, header: same}); rec.Code != 200 {
		t.Fatalf("same-origin POST by the admin: %d %s", rec.Code, rec.Body)
	}
	accepted(t, post(h, `{"chat":"42","text":"from curl"}`))
}

// TestLocalModeRefusesSimpleRequests checks the API without
// authentication: a page on another origin can send a no-cors POST with
// a text/plain, form or multipart body and no preflight; such POSTs are
// refused with a 415 and store nothing, cross-site requests with a 403,
// and JSON from curl is accepted.
func TestLocalModeRefusesSimpleRequests(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, func(c *producer.Config) {
		withUI(t, "")(c)
		c.Keyring = httpapi.OpenKeyring()
	})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		rec := do(h, request{body: `{"chat":"42","text":"x"}`, noAuth: true, header: http.Header{"Content-Type": {ct}}})
		errorBody(t, rec, http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMedia)
	}
	rec := do(h, request{body: `{"chat":"42","text":"x"}`, noAuth: true, header: hdr("Sec-Fetch-Site", "cross-site")})
	errorBody(t, rec, http.StatusForbidden, httpapi.CodeCrossOrigin)
	b.requireNoTasks(t)
	accepted(t, do(h, request{body: `{"chat":"42","text":"x"}`, noAuth: true}))
	if rec := do(h, request{path: "/monitoring/api/queues/default:pause", noAuth: true, header: http.Header{"Content-Type": nil}}); rec.Code != 200 ||
		rec.Body.String() != "read-write POST" {
		t.Fatalf("local web UI action: %d %q, want the read-write UI", rec.Code, rec.Body)
	}
}

// TestMetricsToken checks /metrics behind its own token: the API token is
// not enough.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "herald_test_gauge", Help: "A gauge to scrape."}))
	h, _ := newTestAPI(t, func(c *producer.Config) {
		c.Metrics, c.MetricsToken, c.Registerer = promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "scrape-token", reg
	})
	errorBody(t, do(h, request{method: http.MethodGet, path: "/metrics", noAuth: true}), http.StatusUnauthorized, httpapi.CodeUnauthorized)
	errorBody(t, do(h, request{method: http.MethodGet, path: "/metrics"}), http.StatusUnauthorized, httpapi.CodeUnauthorized)
	rec := do(h, request{method: http.MethodGet, path: "/metrics", noAuth: true, header: hdr("Authorization", "Bearer scrape-token")})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "herald_test_gauge 0") {
		t.Fatalf("/metrics with its token: %d %.200s", rec.Code, rec.Body)
	}
}

// TestMonitoringPathConflict checks that a web UI path on top of an API
// route is an error naming the setting, not a panic.
func TestMonitoringPathConflict(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	for _, path := range []string{"/v1/webhooks", "/v1/messages"} {
		_, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: testKeyring(t, testToken, ""),
			Monitoring: uiStub("ui"), MonitoringPath: path,
			Mounts: []httpapi.Mount{{Pattern: "/v1/webhooks/", Handler: uiStub("hooks"), SelfAuth: true}}})
		if err == nil || !strings.Contains(err.Error(), "HERALD_MONITORING_PATH") {
			t.Errorf("monitoring path %s: NewAPI error %v, want one naming HERALD_MONITORING_PATH", path, err)
		}
	}
}
