package webhooks

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// GitHub's delivery headers.
const (
	headerGitHubSignature = "X-Hub-Signature-256"
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitHubDelivery  = "X-GitHub-Delivery"
)

// GitHubConfig configures the GitHub receiver.
type GitHubConfig struct {
	// Secret is the webhook secret that signs X-Hub-Signature-256
	// (HERALD_GITHUB_WEBHOOK_SECRET). Without it (and SecretFile) the
	// endpoint answers 404: unsigned payloads are never taken.
	Secret string
	// SecretFile is a file holding the secret, read by Handler
	// (HERALD_GITHUB_WEBHOOK_SECRET_FILE); it excludes Secret.
	SecretFile string
}

// github is the GitHub receiver. The signature is required: without a
// configured secret the endpoint answers 404 rather than take unsigned
// payloads.
func (s *server) github() receiver {
	rc := receiver{
		name:     "github",
		precheck: precheckGitHub,
		verify:   s.verifyGitHub,
		decode: func(r *http.Request, body []byte) (decoded, *httpapi.Error) {
			payload, e := githubJSON(r, body)
			if e != nil {
				return decoded{}, e
			}
			return decodeGitHub(r.Header.Get(headerGitHubEvent), r.Header.Get(headerGitHubDelivery), bodyDigest(body), payload)
		},
	}
	if s.cfg.GitHub.Secret == "" {
		rc.disabled = "the GitHub webhook is disabled: no GitHub webhook secret is configured on this server"
	}
	return rc
}

// precheckGitHub refuses a delivery whose X-Hub-Signature-256 is missing
// or cannot be an HMAC-SHA256, before its body is read.
func precheckGitHub(r *http.Request) *httpapi.Error {
	const fix = "set the same secret in the GitHub webhook settings"
	sig := r.Header.Get(headerGitHubSignature)
	if sig == "" {
		return missingSignature(headerGitHubSignature, fix)
	}
	if hexSig, ok := strings.CutPrefix(sig, "sha256="); !ok || !wellFormed(hexSig) {
		return wrongSignature(headerGitHubSignature, fix)
	}
	return nil
}

// verifyGitHub checks X-Hub-Signature-256: "sha256=" and the hex
// HMAC-SHA256 of the raw body under the webhook secret.
func (s *server) verifyGitHub(r *http.Request, body []byte) *httpapi.Error {
	const fix = "set the same secret in the GitHub webhook settings"
	sig := r.Header.Get(headerGitHubSignature)
	if sig == "" {
		return missingSignature(headerGitHubSignature, fix)
	}
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if !ok || !signatureMatches(hexSig, s.cfg.GitHub.Secret, body) {
		return wrongSignature(headerGitHubSignature, fix)
	}
	return nil
}

// githubJSON returns the JSON payload of a delivery: the body itself, or,
// for a webhook set to the application/x-www-form-urlencoded content type,
// its payload form field. The signature was checked over the raw body.
func githubJSON(r *http.Request, body []byte) ([]byte, *httpapi.Error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || !form.Has("payload") {
		return nil, httpapi.Invalid("not a GitHub form-encoded delivery",
			jobs.FieldError{Field: "payload", Message: "is required: the form must carry the JSON payload (or set the webhook's content type to application/json)"})
	}
	return []byte(form.Get("payload")), nil
}

// decodeGitHub renders one GitHub delivery. The alert's fingerprint is the
// event and the digest of the signed body ("github/<event>/<digest>"), not
// the unsigned delivery id: a redelivery, or a captured delivery replayed
// under a new delivery id, is sent once. Events and actions Herald does not
// render give an ignored result, not an error.
func decodeGitHub(event, delivery, digest string, body []byte) (decoded, *httpapi.Error) {
	event = strings.TrimSpace(event)
	delivery = strings.TrimSpace(delivery)
	d := decoded{attrs: []any{"event", clip(event, 64), "delivery", clip(delivery, 64)}}
	var missing []jobs.FieldError
	if event == "" {
		missing = append(missing, jobs.FieldError{Field: headerGitHubEvent, Message: "header is required"})
	}
	if delivery == "" {
		missing = append(missing, jobs.FieldError{Field: headerGitHubDelivery, Message: "header is required: it is the idempotency key"})
	}
	if len(missing) > 0 {
		return d, httpapi.Invalid("not a GitHub webhook delivery", missing...)
	}
	var p ghPayload
	if err := httpapi.Unmarshal(body, &p); err != nil {
		return d, asHTTPError(err)
	}
	d.attrs = append(d.attrs, "action", clip(p.Action, 64))
	g := ghRender{event: event, delivery: delivery, digest: digest, p: &p}
	var (
		a      alerts.Alert
		reason string
		e      *httpapi.Error
	)
	switch event {
	case "ping":
		d.ignored = "ping: the webhook reaches Herald and its signature is valid; nothing is sent"
		return d, nil
	case "release":
		a, reason, e = g.release()
	case "workflow_run":
		a, reason, e = g.workflowRun()
	case "issues":
		a, reason, e = g.issue()
	case "pull_request":
		a, reason, e = g.pullRequest()
	case "security_advisory":
		a, reason, e = g.securityAdvisory()
	case "dependabot_alert":
		a, reason, e = g.dependabotAlert()
	case "repository_vulnerability_alert":
		a, reason, e = g.vulnerabilityAlert()
	default:
		d.ignored = fmt.Sprintf("GitHub event %q is not rendered by Herald", clip(event, 64))
		return d, nil
	}
	return one(d, a, reason, e, "GitHub "+event)
}
