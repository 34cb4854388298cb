package reliability

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Webhook secrets of the bad-input sweep's producer.
const (
	fxGitHubSecret  = "fx-github-webhook-secret"
	fxSentrySecret  = "fx-sentry-client-secret"
	fxGrafanaSecret = "fx-grafana-webhook-secret"
)

// fxSign is the hex HMAC-SHA256 of body under secret.
func fxSign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// fxBadAlertsRequests covers the alerts API, heartbeats and every webhook:
// malformed and wrongly typed bodies, bad field values, missing or wrong
// tokens and signatures, unknown names.
func fxBadAlertsRequests() []fxBadRequest {
	alert := func(name, body string) fxBadRequest {
		return fxBadRequest{name: "alerts/" + name, method: http.MethodPost, path: "/v1/alerts", body: body, jsonError: true}
	}
	const okAlert = `{"title":"Disk full","severity":"warning"}`
	reqs := []fxBadRequest{
		alert("empty", ""),
		alert("null", "null"),
		alert("array", `[`+okAlert+`]`),
		alert("truncated", `{"title":"Disk`),
		alert("trailing", okAlert+`{}`),
		alert("missing-title", `{"severity":"warning"}`),
		alert("blank-title", `{"title":"   "}`),
		alert("title-number", `{"title":5}`),
		alert("severity-unknown", `{"title":"x","severity":"apocalyptic"}`),
		alert("status-unknown", `{"title":"x","status":"maybe"}`),
		alert("url-relative", `{"title":"x","url":"/d/abc"}`),
		alert("url-javascript", `{"title":"x","url":"javascript:alert(1)"}`),
		alert("labels-array", `{"title":"x","labels":["a"]}`),
		alert("labels-number-value", `{"title":"x","labels":{"a":1}}`),
		alert("unknown-field", `{"title":"x","priority":"high"}`),
		alert("title-too-long", `{"title":"`+strings.Repeat("t", 1025)+`"}`),
		alert("batch-one-bad", `{"alerts":[`+okAlert+`,{"severity":"info"}]}`),
		alert("duplicate-key", `{"title":"x","severity":"info","title":"y"}`),
		alert("case-variant-duplicate", `{"title":"x","TITLE":"y"}`),
		alert("case-variant-key", `{"Title":"x"}`),
		alert("labels-duplicate-key", `{"title":"x","labels":{"env":"a","env":"b"}}`),
		alert("batch-duplicate-key", `{"alerts":[`+okAlert+`,{"title":"x","Title":"y"}]}`),
		alert("batch-case-variant-key", `{"alerts":[{"TITLE":"x"}]}`),
		alert("duplicate-alerts-key", `{"alerts":[`+okAlert+`],"alerts":[`+okAlert+`]}`),
		alert("batch-empty", `{"alerts":[]}`),
		alert("batch-too-many", `{"alerts":[`+strings.TrimSuffix(strings.Repeat(okAlert+",", 101), ",")+`]}`),
		alert("body-over-limit", `{"title":"x","body":"`+strings.Repeat("b", 2<<20)+`"}`),
		{name: "alerts/content-type", method: http.MethodPost, path: "/v1/alerts", body: okAlert, contentType: "text/plain", jsonError: true},
		{name: "alerts/method-get", method: http.MethodGet, path: "/v1/alerts", jsonError: true},

		{name: "heartbeats/bad-name", method: http.MethodPut, path: "/v1/heartbeats/bad%20name?interval=5m", jsonError: true},
		{name: "heartbeats/name-too-long", method: http.MethodPut, path: "/v1/heartbeats/" + strings.Repeat("n", 65) + "?interval=5m", jsonError: true},
		{name: "heartbeats/first-ping-without-interval", method: http.MethodPut, path: "/v1/heartbeats/backup", jsonError: true},
		{name: "heartbeats/bad-interval", method: http.MethodPut, path: "/v1/heartbeats/backup?interval=soon", jsonError: true},
		{name: "heartbeats/negative-interval", method: http.MethodPut, path: "/v1/heartbeats/backup?interval=-5m", jsonError: true},
		{name: "heartbeats/unknown-query", method: http.MethodPut, path: "/v1/heartbeats/backup?interval=5m&every=1h", jsonError: true},
		{name: "heartbeats/bad-severity", method: http.MethodPut, path: "/v1/heartbeats/backup?interval=5m&severity=loud", jsonError: true},
		{name: "heartbeats/body-wrong-type", method: http.MethodPut, path: "/v1/heartbeats/backup", body: `{"interval":300}`, jsonError: true},
		{name: "heartbeats/body-duplicate-key", method: http.MethodPut, path: "/v1/heartbeats/backup", body: `{"interval":"5m","interval":"1h"}`, jsonError: true},
		{name: "heartbeats/body-case-variant-key", method: http.MethodPut, path: "/v1/heartbeats/backup", body: `{"Interval":"5m"}`, jsonError: true},
		{name: "heartbeats/delete-unknown", method: http.MethodDelete, path: "/v1/heartbeats/never-seen", jsonError: true},
		{name: "heartbeats/method-patch", method: http.MethodPatch, path: "/v1/heartbeats/backup", jsonError: true},

		{name: "webhooks/alertmanager-malformed", method: http.MethodPost, path: "/v1/webhooks/alertmanager", body: `{"version":"4","alerts":[`, jsonError: true},
		{name: "webhooks/alertmanager-alerts-object", method: http.MethodPost, path: "/v1/webhooks/alertmanager", body: `{"version":"4","status":"firing","alerts":{}}`, jsonError: true},
		{name: "webhooks/grafana-unsigned", method: http.MethodPost, path: "/v1/webhooks/grafana", body: `{"status":"firing","alerts":[]}`, jsonError: true},
		{name: "webhooks/unknown-sender", method: http.MethodPost, path: "/v1/webhooks/pagerduty", body: `{}`, jsonError: true},
		{name: "webhooks/generic-unknown-name", method: http.MethodPost, path: "/v1/webhooks/generic/nope", body: `{}`, jsonError: true},
	}
	ghBody := `{"action":"published","release":{"tag_name":"v1"},"repository":{"full_name":"a/b"}}`
	gh := func(name, body string, hdr map[string]string) fxBadRequest {
		h := map[string]string{"X-GitHub-Event": "release", "X-GitHub-Delivery": "d-" + name}
		for k, v := range hdr {
			h[k] = v
		}
		return fxBadRequest{name: "webhooks/github-" + name, method: http.MethodPost, path: "/v1/webhooks/github", body: body, header: h, jsonError: true}
	}
	reqs = append(reqs,
		gh("unsigned", ghBody, nil),
		gh("wrong-signature", ghBody, map[string]string{"X-Hub-Signature-256": "sha256=" + fxSign("other", ghBody)}),
		gh("sha1-only", ghBody, map[string]string{"X-Hub-Signature": "sha1=00"}),
		gh("signed-malformed", `{"action":`, map[string]string{"X-Hub-Signature-256": "sha256=" + fxSign(fxGitHubSecret, `{"action":`)}),
		gh("signed-wrong-types", `{"action":5}`, map[string]string{"X-Hub-Signature-256": "sha256=" + fxSign(fxGitHubSecret, `{"action":5}`)}),
		gh("signature-of-other-body", ghBody, map[string]string{"X-Hub-Signature-256": "sha256=" + fxSign(fxGitHubSecret, ghBody+" ")}),
	)
	sBody := `{"action":"created","data":{"issue":{"id":"1","title":"boom"}}}`
	sentry := func(name, body string, hdr map[string]string) fxBadRequest {
		h := map[string]string{"Sentry-Hook-Resource": "issue", "Request-ID": "r-" + name}
		for k, v := range hdr {
			h[k] = v
		}
		return fxBadRequest{name: "webhooks/sentry-" + name, method: http.MethodPost, path: "/v1/webhooks/sentry", body: body, header: h, jsonError: true}
	}
	reqs = append(reqs,
		sentry("unsigned", sBody, nil),
		sentry("wrong-signature", sBody, map[string]string{"Sentry-Hook-Signature": fxSign("other", sBody)}),
		sentry("signed-malformed", `{"data":`, map[string]string{"Sentry-Hook-Signature": fxSign(fxSentrySecret, `{"data":`)}),
	)
	// The token-authenticated webhooks refuse requests without the token.
	for _, a := range []struct {
		name string
		auth fxAuth
	}{{"none", fxNoAuth}, {"wrong-bearer", fxWrongAuth}, {"basic-wrong-password", fxBasicBad}} {
		for _, p := range []string{"/v1/alerts", "/v1/heartbeats/backup?interval=5m", "/v1/heartbeats", "/v1/webhooks/alertmanager", "/v1/webhooks/generic/uptime"} {
			method := http.MethodPost
			if p == "/v1/heartbeats" {
				method = http.MethodGet
			}
			reqs = append(reqs, fxBadRequest{name: "auth/" + strings.TrimPrefix(strings.SplitN(p, "?", 2)[0], "/v1/") + "-" + a.name,
				method: method, path: p, body: okAlert, auth: a.auth, jsonError: true})
		}
	}
	return reqs
}
