package inbound

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/webhooks"
)

// PagerDuty Events API v2: POST /v1/inbound/pagerduty/v2/enqueue, the
// path of events.pagerduty.com/v2/enqueue. The routing_key in the body is a
// Herald API token (the integration key PagerDuty would have). trigger
// fires an alert keyed by dedup_key (made up and returned when the event
// has none), resolve resolves it in the same thread, acknowledge is
// passed to Config.Acknowledge. payload.severity (critical, error,
// warning, info) maps to Herald's severities; payload.source, component,
// group and class become labels; custom_details, links and the first
// image go into the message. PagerDuty answers 202 with status, message
// and dedup_key, and refuses with 400 {"status": "invalid event",
// "message": "Event object is invalid", "errors": [...]}.

// pdEvent is one Events API v2 event.
type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload"`
	Client      string     `json:"client"`
	ClientURL   string     `json:"client_url"`
	Links       []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
	Images []struct {
		Src  string `json:"src"`
		Href string `json:"href"`
		Alt  string `json:"alt"`
	} `json:"images"`
}

type pdPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp"`
	Component     string         `json:"component"`
	Group         string         `json:"group"`
	Class         string         `json:"class"`
	CustomDetails map[string]any `json:"custom_details"`
}

func pagerDutyFormat() *format {
	return &format{
		name:     "pagerduty",
		patterns: []string{"POST " + Prefix + "pagerduty/v2/enqueue"},
		inBody:   true,
		credential: func(_ *http.Request, body []byte) string {
			var e struct {
				RoutingKey string `json:"routing_key"`
			}
			_ = json.Unmarshal(body, &e)
			return e.RoutingKey
		},
		decode: decodePagerDuty,
		answer: func(w http.ResponseWriter, _ *request, o outcome) {
			httpapi.WriteJSON(w, http.StatusAccepted, pdAnswer{Status: "success", Message: "Event processed", DedupKey: o.dedupKey})
		},
		fail: failPagerDuty,
	}
}

// pdAnswer is the Events API's answer body, errors only in refusals.
type pdAnswer struct {
	Status   string   `json:"status"`
	Message  string   `json:"message"`
	DedupKey string   `json:"dedup_key,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

func failPagerDuty(w http.ResponseWriter, e *httpapi.Error) {
	switch {
	case e.Status >= 500:
		httpapi.WriteJSON(w, e.Status, pdAnswer{Status: "unavailable", Message: e.Message})
		return
	case e.Status == http.StatusRequestEntityTooLarge:
		httpapi.WriteJSON(w, e.Status, pdAnswer{Status: "invalid event", Message: "Request too large", Errors: []string{e.Message}})
		return
	}
	errs := []string{}
	switch {
	case e.Status == http.StatusUnauthorized:
		errs = append(errs, "Invalid routing key")
	case len(e.Fields) > 0:
		for _, f := range e.Fields {
			errs = append(errs, fmt.Sprintf("'%s' %s", f.Field, f.Message))
		}
	default:
		errs = append(errs, e.Message)
	}
	httpapi.WriteJSON(w, http.StatusBadRequest, pdAnswer{Status: "invalid event", Message: "Event object is invalid", Errors: errs})
}

func decodePagerDuty(q *request) (outcome, *httpapi.Error) {
	var ev pdEvent
	if err := json.Unmarshal(q.body, &ev); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "Malformed JSON: %v", err)
	}
	if fe := checkPagerDuty(&ev); len(fe) > 0 {
		return outcome{}, httpapi.Invalid("Event object is invalid", fe...)
	}
	o := outcome{dedupKey: ev.DedupKey}
	if o.dedupKey == "" {
		o.dedupKey = q.id
	}
	k := key("pagerduty", q.token, o.dedupKey)
	if ev.EventAction == "acknowledge" {
		o.ack = k
		return o, nil
	}
	a := pdAlert(&ev, q.token)
	a.Key = k
	a.Fingerprint = key(k, ev.EventAction, digest(a.Title+"\x00"+a.Body))
	o.alerts = []alerts.Alert{a}
	o.bare = ev.EventAction == "resolve" && ev.Payload == nil
	return o, nil
}

// checkPagerDuty reports what the Events API refuses.
func checkPagerDuty(ev *pdEvent) []jobs.FieldError {
	var fe []jobs.FieldError
	missing := func(field string) { fe = append(fe, jobs.FieldError{Field: field, Message: "is missing or blank"}) }
	switch ev.EventAction {
	case "trigger":
		if ev.Payload == nil {
			missing("payload")
			break
		}
		if strings.TrimSpace(ev.Payload.Summary) == "" {
			missing("payload.summary")
		}
		if strings.TrimSpace(ev.Payload.Source) == "" {
			missing("payload.source")
		}
		switch ev.Payload.Severity {
		case "critical", "error", "warning", "info":
		default:
			fe = append(fe, jobs.FieldError{Field: "payload.severity", Message: "is invalid (expected one of: critical, error, warning, info)"})
		}
	case "acknowledge", "resolve":
		if strings.TrimSpace(ev.DedupKey) == "" {
			missing("dedup_key")
		}
	case "":
		missing("event_action")
	default:
		fe = append(fe, jobs.FieldError{Field: "event_action", Message: "is invalid (expected one of: trigger, acknowledge, resolve)"})
	}
	return fe
}

// pdAlert renders a trigger or resolve event.
func pdAlert(ev *pdEvent, token string) alerts.Alert {
	a := alerts.Alert{Source: "pagerduty", Status: alerts.StatusFiring, URL: ev.ClientURL}
	if ev.EventAction == "resolve" {
		a.Status = alerts.StatusResolved
	}
	p := ev.Payload
	if p == nil {
		p = &pdPayload{}
	}
	a.Title = firstOf(p.Summary, "Resolved: "+ev.DedupKey)
	a.Severity = webhooks.MapSeverity(p.Severity, "")
	if t, err := time.Parse(time.RFC3339Nano, p.Timestamp); err == nil {
		a.Time = t.UTC()
	}
	a.Labels = labelsOf(token, "source", p.Source, "component", p.Component, "group", p.Group, "class", p.Class)
	var links []string
	for _, l := range ev.Links {
		links = append(links, firstOf(l.Text, "Link")+": "+l.Href)
		a.URL = firstOf(a.URL, l.Href)
	}
	for _, im := range ev.Images {
		a.ImageURL = firstOf(a.ImageURL, im.Src)
		if im.Href != "" {
			links = append(links, firstOf(im.Alt, "Image")+": "+im.Href)
		}
	}
	a.Body = joinBlocks(detailsText(p.CustomDetails), strings.Join(links, "\n"), clientLine(ev.Client))
	return a
}

func clientLine(c string) string {
	if c = strings.TrimSpace(c); c != "" {
		return "via " + c
	}
	return ""
}

// detailsText renders a details object as "name: value" lines in name
// order; a multi-line value goes below its name.
func detailsText(m map[string]any) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var ls []string
	for _, k := range names {
		v := valueText(m[k])
		if strings.TrimSpace(v) == "" {
			continue
		}
		if strings.Contains(v, "\n") {
			ls = append(ls, k+":\n"+strings.TrimSpace(v))
			continue
		}
		ls = append(ls, k+": "+v)
	}
	return strings.Join(ls, "\n")
}

// valueText is a JSON value as text: a string as it is, anything else as
// compact JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// digest shortens text to 16 hex digits of its SHA-256, for fingerprints.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
