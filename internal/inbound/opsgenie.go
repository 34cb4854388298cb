package inbound

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/webhooks"
)

// Opsgenie Alert API: under /v1/inbound/opsgenie/, the paths of
// api.opsgenie.com — POST v2/alerts creates, POST
// v2/alerts/{identifier}/close and …/acknowledge close and acknowledge
// (…/message, …/description and …/notes, which only edit Opsgenie's own
// view, are accepted and send nothing),
// identifierType=alias (Herald keys alerts by alias; id and tiny are taken
// as the alias too, since Herald hands out no Opsgenie ids). The key is
// sent as Opsgenie's clients send it, "Authorization: GenieKey <key>", the
// key being a Herald API token. alias is the alert's thread key (the
// message's digest when absent), priority P1…P5 its severity (P1
// critical, P2 and P3 warning, P4 and P5 info; without a priority, a
// "severity" word among the details, else P3), tags a
// "tags" label joined by commas, details labels (so Alertmanager's
// labels, which it sends there, stay routable), entity and source labels
// too. Opsgenie answers 202 {"result": "Request will be processed",
// "took", "requestId"} and refuses with {"message", "took", "requestId"},
// 422 with "errors" for an invalid field.

// ogCreate is the create request's body.
type ogCreate struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description"`
	Tags        []string          `json:"tags"`
	Details     map[string]string `json:"details"`
	Entity      string            `json:"entity"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
	Note        string            `json:"note"`
	Responders  []struct {
		Name     string `json:"name"`
		Username string `json:"username"`
		Type     string `json:"type"`
	} `json:"responders"`
}

// ogAction is the body of close and acknowledge, all optional.
type ogAction struct {
	Source string `json:"source"`
	Note   string `json:"note"`
	User   string `json:"user"`
}

// ogAnswer is the Alert API's answer: result on success, message (and
// errors) on a refusal.
type ogAnswer struct {
	Result    string            `json:"result,omitempty"`
	Message   string            `json:"message,omitempty"`
	Errors    map[string]string `json:"errors,omitempty"`
	Took      float64           `json:"took"`
	RequestID string            `json:"requestId"`
}

func opsgenieFormat() *format {
	base := Prefix + "opsgenie/v2/alerts"
	return &format{
		name:     "opsgenie",
		patterns: []string{"POST " + base, "POST " + base + "/{identifier}/{action}", "PUT " + base + "/{identifier}/{action}"},
		credential: func(r *http.Request, _ []byte) string {
			h := r.Header.Get("Authorization")
			if len(h) > 9 && strings.EqualFold(h[:9], "geniekey ") {
				return h[9:]
			}
			return ""
		},
		decode: decodeOpsgenie,
		answer: func(w http.ResponseWriter, q *request, _ outcome) {
			httpapi.WriteJSON(w, http.StatusAccepted, ogAnswer{Result: "Request will be processed", Took: took(q), RequestID: uuid(q.id)})
		},
		fail: func(w http.ResponseWriter, e *httpapi.Error) {
			body := ogAnswer{Message: e.Message, RequestID: uuid(newID())}
			status := e.Status
			switch {
			case e.Status == http.StatusUnauthorized:
				body.Message = "Could not authenticate"
			case e.Code == httpapi.CodeNoRoute:
				status = http.StatusUnprocessableEntity
			case len(e.Fields) > 0:
				status = http.StatusUnprocessableEntity
				body.Message = "Request body is not processable. Please check the errors."
				body.Errors = map[string]string{}
				for _, f := range e.Fields {
					body.Errors[f.Field] = f.Message
				}
			}
			httpapi.WriteJSON(w, status, body)
		},
	}
}

// took is the request's handling time in seconds, to the millisecond, as
// Opsgenie reports it.
func took(q *request) float64 {
	return float64(time.Since(q.start).Milliseconds()) / 1000
}

func decodeOpsgenie(q *request) (outcome, *httpapi.Error) {
	action := q.r.PathValue("action")
	if action == "" {
		return decodeOpsgenieCreate(q)
	}
	switch {
	case q.r.Method == http.MethodPost && (action == "close" || action == "acknowledge"):
	case action == "message" || action == "description" || action == "notes":
		// Alertmanager's update_alerts and notes edit an alert in
		// Opsgenie's UI; a chat already holds the message. Accepted as
		// Opsgenie accepts them, nothing sent.
		return outcome{}, nil
	default:
		return outcome{}, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound, "No handler found for path: %s", q.r.URL.Path)
	}
	switch t := q.r.URL.Query().Get("identifierType"); t {
	case "", "id", "alias", "tiny":
	default:
		return outcome{}, httpapi.Invalid("invalid identifierType", jobs.FieldError{Field: "identifierType", Message: "Invalid identifier type [" + t + "]. Possible values are [id, alias, tiny]"})
	}
	var body ogAction
	if len(strings.TrimSpace(string(q.body))) > 0 {
		if err := json.Unmarshal(q.body, &body); err != nil {
			return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "Could not parse request body: %v", err)
		}
	}
	k := key("opsgenie", q.token, q.r.PathValue("identifier"))
	if action == "acknowledge" {
		return outcome{ack: k}, nil
	}
	a := alerts.Alert{
		Source: "opsgenie", Status: alerts.StatusResolved, Key: k, Fingerprint: key(k, "close"),
		Title:  "Closed: " + q.r.PathValue("identifier"),
		Body:   joinBlocks(body.Note, byLine(body.User)),
		Labels: labelsOf(q.token, "source", body.Source),
	}
	return outcome{alerts: []alerts.Alert{a}, bare: true}, nil
}

func byLine(user string) string {
	if user = strings.TrimSpace(user); user != "" {
		return "by " + user
	}
	return ""
}

func decodeOpsgenieCreate(q *request) (outcome, *httpapi.Error) {
	var c ogCreate
	if err := json.Unmarshal(q.body, &c); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "Could not parse request body: %v", err)
	}
	var fe []jobs.FieldError
	if strings.TrimSpace(c.Message) == "" {
		fe = append(fe, jobs.FieldError{Field: "message", Message: "Message can not be empty."})
	}
	switch c.Priority {
	case "", "P1", "P2", "P3", "P4", "P5":
	default:
		fe = append(fe, jobs.FieldError{Field: "priority", Message: "Priority should be one of [P1, P2, P3, P4, P5]"})
	}
	if utf8.RuneCountInString(c.Alias) > 512 {
		fe = append(fe, jobs.FieldError{Field: "alias", Message: "Alias can not be longer than 512 characters."})
	}
	if len(fe) > 0 {
		return outcome{}, httpapi.Invalid("Request body is not processable. Please check the errors.", fe...)
	}
	alias := firstOf(c.Alias, digest(c.Message))
	k := key("opsgenie", q.token, alias)
	a := alerts.Alert{
		Source: "opsgenie", Status: alerts.StatusFiring, Key: k,
		Title:    c.Message,
		Severity: webhooks.MapSeverity(firstOf(c.Priority, "P3"), alerts.SeverityWarning),
	}
	if c.Priority == "" {
		// No priority (Opsgenie would take P3): a severity among the
		// details, where Alertmanager puts its labels, says more.
		a.Severity = webhooks.MapSeverity(c.Details["severity"], a.Severity)
	}
	a.Fingerprint = key(k, "create", digest(c.Message+"\x00"+c.Description))
	a.Labels = labelsOf(q.token, "entity", c.Entity, "source", c.Source, "tags", strings.Join(c.Tags, ","), "priority", firstOf(c.Priority, "P3"))
	for k, v := range c.Details {
		if _, taken := a.Labels[k]; !taken {
			a.Labels[k] = v
		}
	}
	a.Body = joinBlocks(markdownText(c.Description), responders(c), c.Note)
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// responders names the create request's responders on one line.
func responders(c ogCreate) string {
	var names []string
	for _, r := range c.Responders {
		if n := firstOf(r.Name, r.Username); n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return "Responders: " + strings.Join(names, ", ")
}
