package webhooks

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// amPayload is Alertmanager's webhook payload (version "4"). Grafana's
// contact point payload has the same shape plus the fields marked Grafana.
type amPayload struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   uint64            `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	// Alerts is a pointer so that a missing list (not an Alertmanager
	// payload) is told apart from an empty one.
	Alerts *[]amAlert `json:"alerts"`

	// Grafana. ImageURL is the notification's image in Grafana's legacy
	// webhook (spelt imageUrl there; JSON field names match in any case);
	// Grafana alerting gives each alert its own.
	OrgID    int64  `json:"orgId"`
	State    string `json:"state"`
	Title    string `json:"title"`
	Message  string `json:"message"`
	ImageURL string `json:"imageURL"`
}

// amAlert is one alert of a group.
type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`

	// Grafana.
	SilenceURL   string         `json:"silenceURL"`
	DashboardURL string         `json:"dashboardURL"`
	PanelURL     string         `json:"panelURL"`
	ImageURL     string         `json:"imageURL"`
	Values       map[string]any `json:"values"`
	ValueString  string         `json:"valueString"`
}

// alertmanager is the Alertmanager receiver: token authentication, one
// alert per alert of the group.
func (s *server) alertmanager() receiver {
	return receiver{
		name:      "alertmanager",
		authorize: s.requireToken("the Alertmanager receiver's http_config"),
		decode: func(_ *http.Request, body []byte) (decoded, *httpapi.Error) {
			return decodeAlertmanager(body)
		},
	}
}

// decodeAlertmanager turns an Alertmanager webhook payload into one alert
// per alert of the group, firing and resolved alike.
func decodeAlertmanager(body []byte) (decoded, *httpapi.Error) {
	return decodeGroup("alertmanager", body)
}

// decodeGroup decodes the payload shape Alertmanager and Grafana share.
// The fingerprint of each alert is the sender's fingerprint, status and
// start time: a firing alert and its resolution are both delivered, while
// the repeats Alertmanager sends every repeat_interval are folded into one
// by the idempotency window. The alert's key is the sender's fingerprint
// alone, so that its resolution joins the firing message's thread.
func decodeGroup(sender string, body []byte) (decoded, *httpapi.Error) {
	var p amPayload
	if err := httpapi.Unmarshal(body, &p); err != nil {
		return decoded{}, asHTTPError(err)
	}
	d := decoded{attrs: []any{"receiver", clip(p.Receiver, 100), "group_key", clip(p.GroupKey, 200)}}
	if p.Alerts == nil {
		return d, httpapi.Invalid("not a "+sender+" webhook payload", jobs.FieldError{Field: "alerts",
			Message: "is required: the body must be the JSON " + sender + " sends to a webhook"})
	}
	d.attrs = append(d.attrs, "version", clip(p.Version, 20), "status", clip(p.Status, 20))
	if p.TruncatedAlerts > 0 {
		d.attrs = append(d.attrs, "truncated_alerts", p.TruncatedAlerts)
	}
	if len(*p.Alerts) == 0 {
		d.ignored = "the alert group holds no alerts"
		return d, nil
	}
	var fields []jobs.FieldError
	for i, in := range *p.Alerts {
		a, err := groupAlert(sender, &p, in)
		if err != nil {
			fields = append(fields, jobs.FieldError{Field: fmt.Sprintf("alerts[%d].status", i), Message: err.Error()})
			continue
		}
		d.alerts = append(d.alerts, a)
	}
	if len(fields) > 0 {
		return d, httpapi.Invalid("invalid alert status", fields...)
	}
	if e := finish(d.alerts, sender+" alert"); e != nil {
		return d, e
	}
	return d, nil
}

// groupAlert renders one alert of a group.
func groupAlert(sender string, p *amPayload, in amAlert) (alerts.Alert, error) {
	status := strings.ToLower(strings.TrimSpace(in.Status))
	if status == "" {
		status = strings.ToLower(strings.TrimSpace(p.Status))
	}
	var a alerts.Alert
	switch alerts.Status(status) {
	case alerts.StatusFiring, alerts.StatusResolved:
		a.Status = alerts.Status(status)
	default:
		return a, errors.New(`must be "firing" or "resolved"`)
	}
	labels := in.Labels
	if labels == nil {
		labels = p.CommonLabels
	}
	ann := in.Annotations
	if ann == nil {
		ann = p.CommonAnnotations
	}
	a.Source = sender
	a.Severity = mapSeverity(labels["severity"], alerts.SeverityWarning)
	a.Title = firstNonBlank(ann["summary"], labels["alertname"])
	a.URL = firstURL(in.GeneratorURL, p.ExternalURL)
	a.Labels = cloneLabels(labels)
	var extra []string
	if u := webURL(ann["runbook_url"]); u != "" {
		extra = append(extra, "Runbook: "+u)
	}
	if sender == "grafana" {
		if v := grafanaValues(in); v != "" {
			extra = append(extra, "Values: "+v)
		}
		if u := webURL(in.DashboardURL); u != "" {
			extra = append(extra, "Dashboard: "+u)
		}
		if u := webURL(in.PanelURL); u != "" {
			extra = append(extra, "Panel: "+u)
		}
	}
	a.Body = paragraphs(firstNonBlank(ann["description"], ann["message"]), lines(extra...))
	start := in.StartsAt
	when := in.StartsAt
	if a.Status == alerts.StatusResolved {
		when = in.EndsAt
	}
	if t, err := time.Parse(time.RFC3339Nano, when); err == nil && t.Year() > 1 {
		a.Time = t.UTC()
	}
	fp := in.Fingerprint
	if fp == "" {
		fp = "labels:" + sortedPairs(labels)
	}
	a.Fingerprint = fingerprint(sender, fp, status, start)
	a.Key = fingerprint(sender, fp)
	if sender == "grafana" {
		a.ImageURL = firstURL(in.ImageURL, p.ImageURL)
	}
	return a, nil
}

// grafanaValues renders Grafana's per-alert query values, "A=95.2, B=1",
// falling back to its valueString.
func grafanaValues(in amAlert) string {
	if len(in.Values) == 0 {
		return strings.TrimSpace(in.ValueString)
	}
	keys := make([]string, 0, len(in.Values))
	for k := range in.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		switch v := in.Values[k].(type) {
		case float64:
			parts = append(parts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
		case string:
			parts = append(parts, k+"="+v)
		case nil:
			parts = append(parts, k+"=null")
		}
	}
	return clip(strings.Join(parts, ", "), summaryLen)
}

// firstNonBlank returns the first argument that is not blank, trimmed.
func firstNonBlank(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// cloneLabels copies a label map so that fitting it never changes the
// decoded payload.
func cloneLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
