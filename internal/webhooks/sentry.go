package webhooks

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Sentry's integration webhook headers.
const (
	headerSentrySignature = "Sentry-Hook-Signature"
	headerSentryResource  = "Sentry-Hook-Resource"
	headerSentryTimestamp = "Sentry-Hook-Timestamp"
	headerSentryRequestID = "Request-ID"
)

// SentryConfig configures the Sentry receiver.
type SentryConfig struct {
	// Secret is the Sentry integration's client secret, which signs
	// Sentry-Hook-Signature (HERALD_SENTRY_CLIENT_SECRET). Without it (and
	// SecretFile) the endpoint answers 404.
	Secret string
	// SecretFile is a file holding the secret, read by Handler
	// (HERALD_SENTRY_CLIENT_SECRET_FILE); it excludes Secret.
	SecretFile string
	// MaxSkew bounds how far Sentry-Hook-Timestamp may be from now;
	// default [defaultSentryMaxSkew]. Sentry does not sign the timestamp,
	// so it only refuses naive replays; the body digest in the idempotency
	// key refuses the others within the idempotency window.
	MaxSkew time.Duration
}

// withDefaults fills the zero fields.
func (c SentryConfig) withDefaults() SentryConfig {
	if c.MaxSkew == 0 {
		c.MaxSkew = defaultSentryMaxSkew
	}
	return c
}

// sentry is the receiver of a Sentry integration's webhooks. Like GitHub it
// requires its secret: without one the endpoint answers 404.
func (s *server) sentry() receiver {
	rc := receiver{
		name:     "sentry",
		precheck: s.precheckSentry,
		verify:   s.verifySentry,
		decode: func(r *http.Request, body []byte) (decoded, *httpapi.Error) {
			return decodeSentry(r.Header.Get(headerSentryResource), r.Header.Get(headerSentryRequestID),
				bodyDigest(body), body)
		},
	}
	if s.cfg.Sentry.Secret == "" {
		rc.disabled = "the Sentry webhook is disabled: no Sentry client secret is configured on this server"
	}
	return rc
}

// precheckSentry refuses, before the body is read, a webhook whose
// Sentry-Hook-Signature cannot be an HMAC-SHA256, or whose
// Sentry-Hook-Timestamp (Unix seconds) is missing or further than
// Sentry.MaxSkew from this server's clock. Sentry does not sign the
// timestamp: the check stops the replay of a captured request as it was;
// the body digest in the idempotency key stops replays with new headers.
func (s *server) precheckSentry(r *http.Request) *httpapi.Error {
	const fix = "set the integration's client secret on this server"
	sig := r.Header.Get(headerSentrySignature)
	if sig == "" {
		return missingSignature(headerSentrySignature, fix)
	}
	if !wellFormed(sig) {
		return wrongSignature(headerSentrySignature, fix)
	}
	ts := strings.TrimSpace(r.Header.Get(headerSentryTimestamp))
	if ts == "" {
		return missingSignature(headerSentryTimestamp, "Sentry sends it with every webhook; a request without one is not from Sentry")
	}
	sec, err := strconv.ParseFloat(ts, 64)
	// Beyond ±9e9 s (year 2255) a time.Duration overflows; such a value is
	// not a timestamp Sentry sends.
	if err != nil || math.IsNaN(sec) || sec > 9e9 || sec < -9e9 {
		return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature, "%s is not a Unix timestamp in seconds", headerSentryTimestamp)
	}
	skew := s.cfg.Clock().Sub(time.Unix(0, int64(sec*float64(time.Second))))
	if skew > s.cfg.Sentry.MaxSkew || skew < -s.cfg.Sentry.MaxSkew {
		return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature,
			"%s is further than %s from this server's clock: a replayed request, or a clock to fix",
			headerSentryTimestamp, s.cfg.Sentry.MaxSkew)
	}
	return nil
}

// verifySentry checks Sentry-Hook-Signature: the hex HMAC-SHA256 of the raw
// body under the integration's client secret.
func (s *server) verifySentry(r *http.Request, body []byte) *httpapi.Error {
	const fix = "set the integration's client secret on this server"
	sig := r.Header.Get(headerSentrySignature)
	if sig == "" {
		return missingSignature(headerSentrySignature, fix)
	}
	if !signatureMatches(sig, s.cfg.Sentry.Secret, body) {
		return wrongSignature(headerSentrySignature, fix)
	}
	return nil
}

// decodeSentry renders one Sentry webhook: issue (created, unresolved,
// resolved, archived, assigned), event_alert (triggered) and metric_alert
// (critical, warning, resolved). Other resources and actions are ignored.
//
// Fingerprints: an event alert is keyed by event and rule; the rest by the
// resource and digest, the bodyDigest of the signed body (never by the
// unsigned Request-ID header, which a replay could change).
func decodeSentry(resource, requestID, digest string, body []byte) (decoded, *httpapi.Error) {
	resource = strings.TrimSpace(resource)
	requestID = strings.TrimSpace(requestID)
	d := decoded{attrs: []any{"resource", clip(resource, 64), "request_id", clip(requestID, 64)}}
	if resource == "" {
		return d, httpapi.Invalid("not a Sentry webhook", jobs.FieldError{Field: headerSentryResource, Message: "header is required"})
	}
	var p sentryPayload
	if err := httpapi.Unmarshal(body, &p); err != nil {
		return d, asHTTPError(err)
	}
	d.attrs = append(d.attrs, "action", clip(p.Action, 64))
	sr := sentryRender{resource: resource, digest: digest, p: &p}
	var (
		a      alerts.Alert
		reason string
		e      *httpapi.Error
	)
	switch resource {
	case "issue":
		a, reason, e = sr.issue()
	case "event_alert":
		a, reason, e = sr.eventAlert()
	case "metric_alert":
		a, reason, e = sr.metricAlert()
	default:
		d.ignored = fmt.Sprintf("Sentry resource %q is not rendered by Herald", clip(resource, 64))
		return d, nil
	}
	return one(d, a, reason, e, "Sentry "+resource)
}

// sentryRender builds the alert of one Sentry webhook.
type sentryRender struct {
	resource, digest string
	p                *sentryPayload
}

// data decodes the payload's data object into v; a missing data object
// leaves v zero.
func (sr sentryRender) data(v any) *httpapi.Error {
	if len(sr.p.Data) == 0 || bytes.Equal(bytes.TrimSpace(sr.p.Data), []byte("null")) {
		return nil
	}
	if err := httpapi.Unmarshal(sr.p.Data, v); err != nil {
		e := asHTTPError(err)
		for i := range e.Fields {
			e.Fields[i].Field = "data." + e.Fields[i].Field
		}
		return e
	}
	return nil
}

func (sr sentryRender) required(field string) *httpapi.Error {
	return httpapi.Invalid("not a Sentry "+sr.resource+" webhook",
		jobs.FieldError{Field: field, Message: "is required for a " + sr.resource + " webhook"})
}

func (sr sentryRender) ignoredAction(handled string) string {
	return fmt.Sprintf("Sentry %s action %q is not rendered (only %s)", sr.resource, clip(sr.p.Action, 64), handled)
}

// base returns an alert with the fields every Sentry alert shares. Its key
// is the resource and the id of the object it is about (an issue, a metric
// alert's incident), so that the object's later webhooks (resolved,
// archived) share its thread.
func (sr sentryRender) base(sev alerts.Severity, status alerts.Status, object string) alerts.Alert {
	labels := map[string]string{"resource": sr.resource}
	if sr.p.Action != "" {
		labels["action"] = sr.p.Action
	}
	fp := fingerprint("sentry", sr.resource, sr.digest)
	a := alerts.Alert{Severity: sev, Status: status, Source: "sentry", Labels: labels, Fingerprint: fp}
	if strings.TrimSpace(object) != "" {
		a.Key = fingerprint("sentry", sr.resource, object)
	}
	return a
}

// userActor names the user who acted, when a user did.
func (sr sentryRender) userActor() string {
	if sr.p.Actor == nil || sr.p.Actor.Type != "user" {
		return ""
	}
	return sr.p.Actor.Name
}

func (sr sentryRender) issue() (alerts.Alert, string, *httpapi.Error) {
	var data sentryIssueData
	if e := sr.data(&data); e != nil {
		return alerts.Alert{}, "", e
	}
	is := data.Issue
	if is == nil {
		return alerts.Alert{}, "", sr.required("data.issue")
	}
	sev := mapSeverity(is.Level, alerts.SeverityWarning)
	status := alerts.StatusFiring
	name := firstNonBlank(is.ShortID, string(is.ID))
	var title string
	switch sr.p.Action {
	case "created":
		title = fmt.Sprintf("New issue %s", name)
	case "unresolved":
		title = fmt.Sprintf("Issue %s unresolved", name)
		if is.Substatus != "" && is.Substatus != "ongoing" {
			title += " (" + is.Substatus + ")"
		}
	case "resolved":
		title = fmt.Sprintf("Issue %s resolved", name)
		status = alerts.StatusResolved
	case "archived", "ignored":
		title = fmt.Sprintf("Issue %s archived", name)
		sev, status = alerts.SeverityInfo, alerts.StatusResolved
	case "assigned":
		title = fmt.Sprintf("Issue %s assigned", name)
		if is.AssignedTo != nil && firstNonBlank(is.AssignedTo.Name, is.AssignedTo.Email) != "" {
			title += " to " + firstNonBlank(is.AssignedTo.Name, is.AssignedTo.Email)
		}
		sev = alerts.SeverityInfo
	default:
		return alerts.Alert{}, sr.ignoredAction("created, unresolved, resolved, archived and assigned"), nil
	}
	a := sr.base(sev, status, string(is.ID))
	if is.Project.Slug != "" {
		title += " in " + is.Project.Slug
	}
	a.Title = title + ": " + firstNonBlank(is.Title, "untitled issue")
	counts := ""
	if is.Count != "" {
		counts = fmt.Sprintf("Events: %s", is.Count)
		if is.UserCount != "" {
			counts += fmt.Sprintf(", users: %s", is.UserCount)
		}
	}
	actor := ""
	if who := sr.userActor(); who != "" {
		actor = "By " + who
	}
	culprit := ""
	if is.Culprit != "" {
		culprit = "Culprit: " + is.Culprit
	}
	a.Body = lines(culprit, counts, actor)
	a.URL = firstURL(is.WebURL, is.Permalink)
	if sr.p.Action == "created" {
		a.Time = parseTime(is.FirstSeen)
	}
	a.Labels["project"] = is.Project.Slug
	a.Labels["level"] = is.Level
	return a, "", nil
}

func (sr sentryRender) eventAlert() (alerts.Alert, string, *httpapi.Error) {
	if sr.p.Action != "triggered" {
		return alerts.Alert{}, sr.ignoredAction("triggered"), nil
	}
	var data sentryEventAlertData
	if e := sr.data(&data); e != nil {
		return alerts.Alert{}, "", e
	}
	ev := data.Event
	if ev == nil {
		return alerts.Alert{}, "", sr.required("data.event")
	}
	a := sr.base(mapSeverity(ev.Level, alerts.SeverityWarning), alerts.StatusFiring, ev.EventID)
	// One message per event and rule, whatever the delivery; the events
	// of one issue that trigger one rule share a thread.
	a.Fingerprint = fingerprint("sentry", "event_alert", firstNonBlank(ev.EventID, string(ev.IssueID), sr.digest), data.TriggeredRule)
	if ev.IssueID != "" {
		a.Key = fingerprint("sentry", "event_alert", string(ev.IssueID), data.TriggeredRule)
	}
	a.Title = firstNonBlank(ev.Title, firstLine(ev.Message), "Sentry event")
	env := ""
	for _, t := range ev.Tags {
		if t.Key == "environment" {
			env = t.Value
		}
	}
	label := func(prefix, v string) string {
		if strings.TrimSpace(v) == "" {
			return ""
		}
		return prefix + v
	}
	a.Body = lines(label("Alert rule: ", data.TriggeredRule), label("Culprit: ", ev.Culprit),
		label("Environment: ", env), label("Release: ", string(ev.Release)))
	a.URL = ev.WebURL
	a.Time = parseTime(ev.Datetime)
	a.Labels["rule"] = data.TriggeredRule
	a.Labels["level"] = ev.Level
	if env != "" {
		a.Labels["environment"] = env
	}
	return a, "", nil
}

func (sr sentryRender) metricAlert() (alerts.Alert, string, *httpapi.Error) {
	var (
		sev    alerts.Severity
		status = alerts.StatusFiring
	)
	switch sr.p.Action {
	case "critical":
		sev = alerts.SeverityCritical
	case "warning":
		sev = alerts.SeverityWarning
	case "resolved":
		// The payload does not say which level resolved.
		sev, status = alerts.SeverityWarning, alerts.StatusResolved
	default:
		return alerts.Alert{}, sr.ignoredAction("critical, warning and resolved"), nil
	}
	var data sentryMetricAlertData
	if e := sr.data(&data); e != nil {
		return alerts.Alert{}, "", e
	}
	inc := data.MetricAlert
	if inc == nil {
		return alerts.Alert{}, "", sr.required("data.metric_alert")
	}
	rule := ""
	if inc.AlertRule != nil {
		rule = inc.AlertRule.Name
	}
	a := sr.base(sev, status, string(inc.ID))
	a.Title = firstNonBlank(data.DescriptionTitle, rule, inc.Title, "Sentry metric alert")
	a.Body = data.DescriptionText
	a.URL = data.WebURL
	if status == alerts.StatusResolved {
		a.Time = parseTime(inc.DateClosed)
	} else {
		a.Time = parseTime(firstNonBlank(inc.DateDetected, inc.DateStarted))
	}
	a.Labels["rule"] = rule
	a.Labels["projects"] = strings.Join(inc.Projects, ",")
	return a, "", nil
}
