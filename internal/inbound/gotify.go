package inbound

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Gotify: POST /v1/inbound/gotify/message — a tool's Gotify server URL is
// /v1/inbound/gotify — with the application token as Gotify's clients
// send it: the X-Gotify-Key header, ?token=, or a bearer token; the token
// is a Herald API token, and its name (the "token" label) is what routes
// tell applications by. The body is JSON or a form: message (required),
// title, priority (8 to 10 critical, 4 to 7 warning, 0 to 3 info; 0 by
// default) and extras (client::display contentType text/markdown,
// client::notification click.url and bigImageUrl). Gotify answers 200 with
// the message as stored (id, appid, message, title, priority, date,
// extras) and refuses with {"error", "errorCode", "errorDescription"}.

// gotifyMessage is the body, and the answer.
type gotifyMessage struct {
	ID       int64          `json:"id"`
	AppID    int64          `json:"appid"`
	Message  string         `json:"message"`
	Title    string         `json:"title"`
	Priority *int           `json:"priority"`
	Date     string         `json:"date"`
	Extras   map[string]any `json:"extras,omitempty"`
}

// gotifyError is Gotify's error body.
type gotifyError struct {
	Error            string `json:"error"`
	ErrorCode        int    `json:"errorCode"`
	ErrorDescription string `json:"errorDescription"`
}

func gotifyFormat() *format {
	return &format{
		name:     "gotify",
		patterns: []string{"POST " + Prefix + "gotify/message"},
		credential: func(r *http.Request, _ []byte) string {
			return firstOf(r.Header.Get("X-Gotify-Key"), r.URL.Query().Get("token"), bearerOrBasic(r))
		},
		decode: decodeGotify,
		answer: func(w http.ResponseWriter, q *request, _ outcome) {
			var m gotifyMessage
			_ = json.Unmarshal(q.body, &m)
			httpapi.WriteJSON(w, http.StatusOK, m)
		},
		fail: func(w http.ResponseWriter, e *httpapi.Error) {
			desc := e.Message
			switch {
			case e.Status == http.StatusUnauthorized:
				desc = "you need to provide a valid access token or user credentials to access this api"
			case e.Status == http.StatusForbidden:
				desc = "you are not allowed to access this api"
			case len(e.Fields) > 0:
				desc = "Field '" + e.Fields[0].Field + "' " + e.Fields[0].Message
			}
			httpapi.WriteJSON(w, e.Status, gotifyError{Error: http.StatusText(e.Status), ErrorCode: e.Status, ErrorDescription: desc})
		},
	}
}

func decodeGotify(q *request) (outcome, *httpapi.Error) {
	var m gotifyMessage
	if strings.HasPrefix(q.r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		v, err := url.ParseQuery(string(q.body))
		if err != nil {
			return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "invalid form: %v", err)
		}
		m.Message, m.Title = v.Get("message"), v.Get("title")
		if p := v.Get("priority"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				return outcome{}, httpapi.Invalid("bad priority", jobs.FieldError{Field: "priority", Message: "must be a number"})
			}
			m.Priority = &n
		}
	} else if err := json.Unmarshal(q.body, &m); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "%v", err)
	}
	if strings.TrimSpace(m.Message) == "" {
		return outcome{}, httpapi.Invalid("message required", jobs.FieldError{Field: "message", Message: "is required"})
	}
	if m.Priority == nil {
		zero := 0
		m.Priority = &zero
	}
	m.ID, m.AppID, m.Date = q.now.UnixNano()%1_000_000_000, 1, q.now.Format("2006-01-02T15:04:05.999999999Z07:00")
	a := gotifyAlert(&m, q.token)
	q.body, _ = json.Marshal(m)
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// gotifyAlert renders a message: the title, else the message's first line.
func gotifyAlert(m *gotifyMessage, token string) alerts.Alert {
	text := m.Message
	if extra(m.Extras, "client::display", "contentType") == "text/markdown" {
		text = markdownText(text)
	}
	a := alerts.Alert{Source: "gotify", Title: m.Title}
	a.URL = extra(m.Extras, "client::notification", "click", "url")
	a.ImageURL = extra(m.Extras, "client::notification", "bigImageUrl")
	switch p := *m.Priority; {
	case p >= 8:
		a.Severity = alerts.SeverityCritical
	case p >= 4:
		a.Severity = alerts.SeverityWarning
	default:
		a.Severity = alerts.SeverityInfo
	}
	if strings.TrimSpace(a.Title) == "" {
		a.Title = firstLine(text)
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), a.Title))
	}
	a.Body = text
	a.Labels = labelsOf(token)
	return a
}

// extra reads a string at path in Gotify's extras, "" when absent.
func extra(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = o[p]
	}
	s, _ := v.(string)
	return s
}
