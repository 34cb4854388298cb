package webhooks

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// TestDispatchErrors makes the dispatcher fail for each receiver's valid
// fixture: invalid alerts give 400, no route 422, anything else 503 with
// Retry-After so the sender retries.
func TestDispatchErrors(t *testing.T) {
	t.Parallel()
	errs := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"unavailable", fmt.Errorf("enqueue: %w: connection refused", jobs.ErrUnavailable), http.StatusServiceUnavailable, httpapi.CodeUnavailable},
		{"unknown error", errors.New("something odd"), http.StatusServiceUnavailable, httpapi.CodeUnavailable},
		{"no route", fmt.Errorf("alert 0: %w", alerts.ErrNoRoute), http.StatusUnprocessableEntity, httpapi.CodeNoRoute},
		{"invalid", &jobs.ValidationError{Fields: []jobs.FieldError{{Field: "alerts[0].title", Message: "is too long"}}}, http.StatusBadRequest, httpapi.CodeInvalidField},
	}
	for sender, v := range validFixture {
		for _, e := range errs {
			t.Run(sender+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				rec := &recorder{err: e.err}
				h := newHandler(t, rec, nil)
				resp := serve(h, req{sender: sender, body: fixture(t, sender, v.file), header: v.header})
				detail := requireError(t, resp, e.status, e.code)
				if e.status == http.StatusServiceUnavailable && resp.Header().Get("Retry-After") == "" {
					t.Fatal("503 without Retry-After")
				}
				if e.code == httpapi.CodeInvalidField && !namesField(detail, "alerts[0].title") {
					t.Fatalf("the 400 does not carry the dispatcher's fields: %s", resp.Body)
				}
				if len(rec.batches) != 1 {
					t.Fatalf("%d dispatch calls, want 1", len(rec.batches))
				}
			})
		}
	}
}

// TestRoutes checks the JSON 404 and 405 answers and the body limit.
func TestRoutes(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHandler(t, rec, func(c *Config) { c.MaxBodyBytes = 1 << 10 })
	cases := []struct {
		name   string
		rq     req
		status int
		code   string
		allow  string
	}{
		{"unknown receiver", req{sender: "alertmanager", path: "/v1/webhooks/pagerduty"}, 404, httpapi.CodeNotFound, ""},
		{"generic without name", req{sender: "generic", path: "/v1/webhooks/generic/"}, 404, httpapi.CodeNotFound, ""},
		{"generic nested path", req{sender: "generic", path: "/v1/webhooks/generic/uptime/x"}, 404, httpapi.CodeNotFound, ""},
		{"GET alertmanager", req{sender: "alertmanager", method: http.MethodGet}, 405, httpapi.CodeMethodNotAllowed, "POST"},
		{"PUT github", req{sender: "github", method: http.MethodPut}, 405, httpapi.CodeMethodNotAllowed, "POST"},
		{"DELETE grafana", req{sender: "grafana", method: http.MethodDelete}, 405, httpapi.CodeMethodNotAllowed, "POST, PUT"},
		{"GET generic", req{sender: "generic", method: http.MethodGet}, 405, httpapi.CodeMethodNotAllowed, "POST"},
		{"body too large", req{sender: "alertmanager", body: bytes.Repeat([]byte(" "), 1<<10+1)}, 413, httpapi.CodeBodyTooLarge, ""},
		{"signed body too large", req{sender: "github", body: bytes.Repeat([]byte(" "), 1<<10+1), header: ghEvent("issues")}, 413, httpapi.CodeBodyTooLarge, ""},
		{"empty body", req{sender: "alertmanager"}, 400, httpapi.CodeInvalidJSON, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := serve(h, tc.rq)
			requireError(t, resp, tc.status, tc.code)
			if got := resp.Header().Get("Allow"); got != tc.allow {
				t.Fatalf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
	rec.requireNothing(t)
}

// TestGrafanaPut checks that Grafana's PUT method is served like POST.
func TestGrafanaPut(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHandler(t, rec, nil)
	requireAccepted(t, serve(h, req{sender: "grafana", method: http.MethodPut, body: fixture(t, "grafana", "firing.json")}), 1)
}

// TestConfigValidation checks that Handler refuses unusable configs with
// errors naming the field.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no dispatcher", func(c *Config) { c.Dispatcher = nil }, "Config.Dispatcher"},
		{"no keyring", func(c *Config) { c.Keyring = nil }, "Config.Keyring"},
		{"negative body limit", func(c *Config) { c.MaxBodyBytes = -1 }, "HERALD_WEBHOOK_MAX_BODY_BYTES (-webhook-max-body-bytes) must be at least 1KiB"},
		{"tiny body limit", func(c *Config) { c.MaxBodyBytes = 512 }, "HERALD_WEBHOOK_MAX_BODY_BYTES (-webhook-max-body-bytes) must be at least 1KiB"},
		{"negative skew", func(c *Config) { c.Grafana.MaxSkew = -1 }, "Config.Grafana.MaxSkew"},
		{"timestamp header without secret", func(c *Config) { c.Grafana.Secret = "" }, "HERALD_GRAFANA_TIMESTAMP_HEADER (-grafana-timestamp-header) needs HERALD_GRAFANA_WEBHOOK_SECRET"},
		{"timestamp header equals signature header", func(c *Config) { c.Grafana.TimestampHeader = "x-grafana-alerting-signature" }, "must differ"},
		{"secret and its file", func(c *Config) { c.GitHub.SecretFile = "/nonexistent" }, "HERALD_GITHUB_WEBHOOK_SECRET (-github-webhook-secret) and HERALD_GITHUB_WEBHOOK_SECRET_FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, &recorder{})
			tc.mutate(&cfg)
			_, err := Handler(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testGrafanaSecret) || strings.Contains(err.Error(), testToken) {
				t.Fatalf("the error holds a secret: %v", err)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		c := Config{}.WithDefaults()
		if c.MaxBodyBytes != 256<<10 || c.Sentry.MaxSkew != defaultSentryMaxSkew || c.Grafana.SignatureHeader != defaultGrafanaSignatureHeader ||
			c.Grafana.MaxSkew != defaultGrafanaMaxSkew || c.Logger == nil || c.Clock == nil {
			t.Fatalf("defaults not applied: %+v", c)
		}
	})
}

// TestLogsCarryIDsNotSecrets checks the log lines: event and delivery ids,
// never a secret, a token or the body.
func TestLogsCarryIDsNotSecrets(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	rec := &recorder{}
	h := newHandler(t, rec, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	body := fixture(t, "github", "issues_opened.json")
	requireAccepted(t, serve(h, req{sender: "github", body: body, header: ghEvent("issues")}), 1)
	requireIgnored(t, serve(h, req{sender: "github", body: fixture(t, "github", "star_created.json"), header: ghEvent("star")}))
	serve(h, req{sender: "github", body: body, header: merge(ghEvent("issues"), map[string]string{headerGitHubSignature: "sha256=00"})})
	serve(h, req{sender: "alertmanager", body: body, header: map[string]string{"Authorization": "Bearer wrong-" + testToken}})
	rec.err = fmt.Errorf("%w: redis down", jobs.ErrUnavailable)
	serve(h, req{sender: "sentry", body: fixture(t, "sentry", "event_alert_triggered.json"), header: sentryHeaders("event_alert")})

	logs := buf.String()
	for _, want := range []string{"delivery=72d3162e-cc78-11e3-81ab-4c9367dc0958", "event=issues", "event=star",
		"webhook rejected", "code=bad_signature", "code=unauthorized", "request_id=0f1e2d3c", "dispatch failed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	for _, secret := range []string{testToken, testGitHubSecret, testSentrySecret, testGrafanaSecret, "Digest drops", "payment provider"} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs hold %q:\n%s", secret, logs)
		}
	}
}

// TestSecretFiles checks that Handler reads each secret from its file.
func TestSecretFiles(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "github")
	if err := os.WriteFile(file, []byte(testGitHubSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, &recorder{}, func(c *Config) { c.GitHub = GitHubConfig{SecretFile: file} })
	body := fixture(t, "github", "issues_opened.json")
	r := httptest.NewRequest(http.MethodPost, pathGitHub, bytes.NewReader(body))
	r.Header.Set(headerGitHubEvent, "issues")
	r.Header.Set(headerGitHubDelivery, "d-1")
	r.Header.Set(headerGitHubSignature, githubSignature(testGitHubSecret, body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusAccepted && w.Code != http.StatusOK {
		t.Fatalf("signed with the secret of the file: %d %s", w.Code, w.Body)
	}
	var p config.Problems
	cfg := Config{GitHub: GitHubConfig{SecretFile: filepath.Join(t.TempDir(), "missing")}}.WithDefaults()
	cfg.Check(&p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "HERALD_GITHUB_WEBHOOK_SECRET_FILE (-github-webhook-secret-file) cannot read") {
		t.Fatalf("a missing secret file: %v", err)
	}
}
