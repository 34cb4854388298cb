package webhooks

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
)

// validFixture is a fixture each receiver accepts, with its headers.
var validFixture = map[string]struct {
	file   string
	header map[string]string
}{
	"alertmanager": {"group.json", nil},
	"grafana":      {"firing.json", nil},
	"github":       {"issues_opened.json", ghEvent("issues")},
	"sentry":       {"event_alert_triggered.json", sentryHeaders("event_alert")},
	"generic":      {"uptime_down.json", nil},
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// merge returns a copy of base with extra set over it.
func merge(base, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// TestAuthentication sends each receiver's valid fixture with missing,
// wrong or alternative credentials: rejections are JSON 401s (404 for a
// receiver without its secret) and dispatch nothing.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	staleTS := strconv.FormatInt(testNow.Add(-10*time.Minute).Unix(), 10)
	futureTS := strconv.FormatInt(testNow.Add(10*time.Minute).Unix(), 10)
	freshTS := strconv.FormatInt(testNow.Unix(), 10)
	grafanaBody := fixture(t, "grafana", "firing.json")
	cases := []struct {
		name     string
		sender   string
		mutate   func(*Config)
		unsigned bool
		header   map[string]string
		status   int    // 0: accepted
		code     string // error code
	}{
		// Token receivers.
		{name: "alertmanager no token", sender: "alertmanager", unsigned: true, status: 401, code: httpapi.CodeUnauthorized},
		{name: "alertmanager wrong token", sender: "alertmanager", header: map[string]string{"Authorization": "Bearer nope"}, status: 401, code: httpapi.CodeUnauthorized},
		{name: "alertmanager basic auth", sender: "alertmanager", header: map[string]string{"Authorization": basicAuth("alertmanager", testToken)}},
		{name: "alertmanager basic auth wrong password", sender: "alertmanager", header: map[string]string{"Authorization": basicAuth(testToken, "x")}, status: 401, code: httpapi.CodeUnauthorized},
		{name: "alertmanager auth disabled", sender: "alertmanager", unsigned: true, mutate: func(c *Config) { c.Keyring = httpapi.OpenKeyring() }},
		{name: "generic no token", sender: "generic", unsigned: true, status: 401, code: httpapi.CodeUnauthorized},
		{name: "generic wrong token", sender: "generic", header: map[string]string{"Authorization": "Bearer " + testToken + "x"}, status: 401, code: httpapi.CodeUnauthorized},

		// Grafana: token and signature.
		{name: "grafana no token", sender: "grafana", header: map[string]string{"Authorization": ""}, status: 401, code: httpapi.CodeUnauthorized},
		{name: "grafana basic auth", sender: "grafana", header: map[string]string{"Authorization": basicAuth("grafana", testToken)}},
		{name: "grafana missing signature", sender: "grafana", header: map[string]string{defaultGrafanaSignatureHeader: ""}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana wrong signature", sender: "grafana", header: map[string]string{defaultGrafanaSignatureHeader: strings.Repeat("ab", 32)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana signature of another secret", sender: "grafana", header: map[string]string{
			testGrafanaTS: freshTS, defaultGrafanaSignatureHeader: grafanaSignature("other", freshTS, grafanaBody)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana missing timestamp", sender: "grafana", header: map[string]string{testGrafanaTS: ""}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana timestamp changed", sender: "grafana", header: map[string]string{testGrafanaTS: freshTS}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana stale timestamp", sender: "grafana", header: map[string]string{
			testGrafanaTS: staleTS, defaultGrafanaSignatureHeader: grafanaSignature(testGrafanaSecret, staleTS, grafanaBody)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana future timestamp", sender: "grafana", header: map[string]string{
			testGrafanaTS: futureTS, defaultGrafanaSignatureHeader: grafanaSignature(testGrafanaSecret, futureTS, grafanaBody)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana non-numeric timestamp", sender: "grafana", header: map[string]string{
			testGrafanaTS: "yesterday", defaultGrafanaSignatureHeader: grafanaSignature(testGrafanaSecret, "yesterday", grafanaBody)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "grafana body-only signature", sender: "grafana", mutate: func(c *Config) { c.Grafana.TimestampHeader = "" },
			header: map[string]string{testGrafanaTS: "", defaultGrafanaSignatureHeader: hmacHex(testGrafanaSecret, grafanaBody)}},
		{name: "grafana custom signature header", sender: "grafana", mutate: func(c *Config) { c.Grafana.TimestampHeader, c.Grafana.SignatureHeader = "", "X-Herald-Sig" },
			header: map[string]string{testGrafanaTS: "", defaultGrafanaSignatureHeader: "", "X-Herald-Sig": hmacHex(testGrafanaSecret, grafanaBody)}},
		{name: "grafana without secret needs no signature", sender: "grafana", mutate: func(c *Config) { c.Grafana.Secret, c.Grafana.TimestampHeader = "", "" },
			header: map[string]string{defaultGrafanaSignatureHeader: "", testGrafanaTS: ""}},

		// GitHub.
		{name: "github missing signature", sender: "github", unsigned: true, status: 401, code: httpapi.CodeBadSignature},
		{name: "github wrong signature", sender: "github", header: map[string]string{headerGitHubSignature: "sha256=" + strings.Repeat("0", 64)}, status: 401, code: httpapi.CodeBadSignature},
		{name: "github signature without prefix", sender: "github", header: map[string]string{headerGitHubSignature: hmacHex(testGitHubSecret, fixture(t, "github", "issues_opened.json"))}, status: 401, code: httpapi.CodeBadSignature},
		{name: "github sha1 signature only", sender: "github", header: map[string]string{headerGitHubSignature: "", "X-Hub-Signature": "sha1=0123456789abcdef0123456789abcdef01234567"}, status: 401, code: httpapi.CodeBadSignature},
		{name: "github signature of another secret", sender: "github", header: map[string]string{headerGitHubSignature: githubSignature("other", fixture(t, "github", "issues_opened.json"))}, status: 401, code: httpapi.CodeBadSignature},
		{name: "github token is not enough", sender: "github", unsigned: true, header: map[string]string{"Authorization": "Bearer " + testToken}, status: 401, code: httpapi.CodeBadSignature},
		{name: "github upper-case hex", sender: "github", header: map[string]string{headerGitHubSignature: "sha256=" + strings.ToUpper(hmacHex(testGitHubSecret, fixture(t, "github", "issues_opened.json")))}},
		{name: "github without secret", sender: "github", mutate: func(c *Config) { c.GitHub.Secret = "" }, status: 404, code: httpapi.CodeNotFound},

		// Sentry.
		{name: "sentry missing signature", sender: "sentry", unsigned: true, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry wrong signature", sender: "sentry", header: map[string]string{headerSentrySignature: "zz-not-hex"}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry signature of another secret", sender: "sentry", header: map[string]string{headerSentrySignature: sentrySignature("other", fixture(t, "sentry", "event_alert_triggered.json"))}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry without secret", sender: "sentry", mutate: func(c *Config) { c.Sentry.Secret = "" }, status: 404, code: httpapi.CodeNotFound},
		{name: "sentry missing timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: ""}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry stale timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: staleTS}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry future timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: futureTS}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry non-numeric timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: "yesterday"}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry huge timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: "1e300"}, status: 401, code: httpapi.CodeBadSignature},
		{name: "sentry fractional timestamp", sender: "sentry", header: map[string]string{headerSentryTimestamp: freshTS + ".25"}},
		{name: "sentry timestamp within the window", sender: "sentry", header: map[string]string{headerSentryTimestamp: strconv.FormatInt(testNow.Add(-4*time.Minute).Unix(), 10)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			h := newHandler(t, rec, tc.mutate)
			v := validFixture[tc.sender]
			resp := serve(h, req{sender: tc.sender, body: fixture(t, tc.sender, v.file), unsigned: tc.unsigned, header: merge(v.header, tc.header)})
			if tc.status == 0 {
				if resp.Code != http.StatusAccepted {
					t.Fatalf("status %d, want 202; body %s", resp.Code, resp.Body)
				}
				if len(rec.dispatched()) == 0 {
					t.Fatal("accepted but nothing dispatched")
				}
				return
			}
			e := requireError(t, resp, tc.status, tc.code)
			rec.requireNothing(t)
			if tc.code == httpapi.CodeUnauthorized && resp.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
			for _, secret := range []string{testToken, testGitHubSecret, testSentrySecret, testGrafanaSecret} {
				if strings.Contains(resp.Body.String(), secret) {
					t.Fatalf("the answer holds a secret: %s", resp.Body)
				}
			}
			if e.Message == "" {
				t.Fatal("error without a message")
			}
		})
	}
}

// TestSignatureCheckedBeforeParsing sends a malformed body with a wrong
// signature: the answer is about the signature, not the JSON, so an
// unauthenticated sender learns nothing about the decoder.
func TestSignatureCheckedBeforeParsing(t *testing.T) {
	t.Parallel()
	for _, sender := range []string{"github", "sentry", "grafana"} {
		rec := &recorder{}
		h := newHandler(t, rec, nil)
		header := map[string]string{headerGitHubSignature: "sha256=00", headerSentrySignature: "00", defaultGrafanaSignatureHeader: "00"}
		resp := serve(h, req{sender: sender, body: []byte("{not json"), header: merge(validFixture[sender].header, header)})
		requireError(t, resp, http.StatusUnauthorized, httpapi.CodeBadSignature)
		rec.requireNothing(t)
	}
}

// TestGitHubFormEncoded posts a delivery of a webhook set to the
// application/x-www-form-urlencoded content type: signed over the form
// body, decoded from its payload field.
func TestGitHubFormEncoded(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHandler(t, rec, nil)
	form := []byte(url.Values{"payload": {string(fixture(t, "github", "issues_opened.json"))}}.Encode())
	formHeader := merge(ghEvent("issues"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	requireAccepted(t, serve(h, req{sender: "github", body: form, header: formHeader}), 1)
	if got := rec.dispatched()[0].Title; !strings.HasPrefix(got, "Issue #412 opened") {
		t.Fatalf("title %q", got)
	}

	resp := serve(h, req{sender: "github", body: []byte("other=1"), header: formHeader})
	requireError(t, resp, http.StatusBadRequest, httpapi.CodeInvalidField)
	if len(rec.dispatched()) != 1 {
		t.Fatal("a form without payload was dispatched")
	}
}
