package inbound

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// ntfy: PUT or POST /v1/inbound/ntfy/{topic} with the message as the body
// and Title, Priority, Tags, Click, Attach, Markdown headers (X- prefixed
// or not, or the same names as query parameters), and the JSON publish,
// POST /v1/inbound/ntfy with {"topic", "message", "title", "priority",
// "tags", "click", "attach", "markdown", "actions"} — the server URL a tool
// is given is /v1/inbound/ntfy. The credential is ntfy's: "Authorization:
// Bearer <token>", basic auth whose password is the token, or ?auth= with
// that header base64-encoded; the token is a Herald API token. The topic
// becomes the alert's "topic" label (routes pick topics by it), the tags a
// "tags" label, priority 5 critical, 4 warning, 1 to 3 info. ntfy answers
// 200 with the message JSON (id, time, expires, event, topic, ...) and
// refuses with {"code", "http", "error", "link"}.

// ntfyTopic is what ntfy accepts as a topic name.
var ntfyTopic = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// ntfyMessage is the JSON publish body, and the answer.
type ntfyMessage struct {
	ID       string   `json:"id,omitempty"`
	Time     int64    `json:"time,omitempty"`
	Expires  int64    `json:"expires,omitempty"`
	Event    string   `json:"event,omitempty"`
	Topic    string   `json:"topic"`
	Message  string   `json:"message"`
	Title    string   `json:"title,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Click    string   `json:"click,omitempty"`
	Attach   string   `json:"attach,omitempty"`
	Markdown bool     `json:"markdown,omitempty"`
	Actions  []struct {
		Action string `json:"action"`
		Label  string `json:"label"`
		URL    string `json:"url"`
	} `json:"actions,omitempty"`
}

func ntfyFormat() *format {
	base := Prefix + "ntfy"
	return &format{
		name:       "ntfy",
		patterns:   []string{"POST " + base, "POST " + base + "/{$}", "POST " + base + "/{topic}", "PUT " + base + "/{topic}"},
		credential: ntfyCredential,
		decode:     decodeNtfy,
		answer: func(w http.ResponseWriter, q *request, o outcome) {
			var m ntfyMessage
			_ = json.Unmarshal(q.body, &m)
			httpapi.WriteJSON(w, http.StatusOK, m)
		},
		fail: func(w http.ResponseWriter, e *httpapi.Error) {
			status, msg := e.Status, e.Message
			switch {
			case status == http.StatusUnauthorized:
				msg = "unauthorized"
			case status == http.StatusForbidden:
				msg = "forbidden"
			case e.Code == httpapi.CodeNoRoute:
				status = http.StatusBadRequest
				msg = "invalid request: " + msg
			case len(e.Fields) > 0:
				msg = "invalid request: " + e.Fields[0].Field + " " + e.Fields[0].Message
			}
			httpapi.WriteJSON(w, status, ntfyError{Code: status*100 + 1, HTTP: status, Error: msg, Link: "https://docs.ntfy.sh/publish/"})
		},
	}
}

// ntfyCredential finds the token: the Authorization header, or ?auth=
// holding that header base64-encoded.
func ntfyCredential(r *http.Request, _ []byte) string {
	if t := bearerOrBasic(r); t != "" {
		return t
	}
	enc := r.URL.Query().Get("auth")
	if enc == "" {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(enc, "="))
	if err != nil {
		return ""
	}
	probe := &http.Request{Header: http.Header{"Authorization": {string(raw)}}}
	return bearerOrBasic(probe)
}

// ntfyParam reads a publish parameter from its headers or query names.
func ntfyParam(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get("X-" + n); v != "" {
			return v
		}
		if v := r.Header.Get(n); v != "" {
			return v
		}
		if v := r.URL.Query().Get(strings.ToLower(n)); v != "" {
			return v
		}
	}
	return ""
}

func decodeNtfy(q *request) (outcome, *httpapi.Error) {
	var m ntfyMessage
	if topic := q.r.PathValue("topic"); topic != "" {
		m = ntfyFromHeaders(q, topic)
	} else if err := json.Unmarshal(q.body, &m); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "invalid request: JSON body malformed: %v", err)
	}
	if !ntfyTopic.MatchString(m.Topic) {
		return outcome{}, httpapi.Invalid("invalid topic", jobs.FieldError{Field: "topic", Message: "must be 1 to 64 of A-Z, a-z, 0-9, _ and -"})
	}
	p, ok := ntfyPriority(q, m.Priority)
	if !ok {
		return outcome{}, httpapi.Invalid("invalid priority", jobs.FieldError{Field: "priority", Message: "must be 1 to 5 or min, low, default, high, max, urgent"})
	}
	m.Priority = p
	if strings.TrimSpace(m.Message) == "" {
		m.Message = "triggered"
	}
	m.ID, m.Event, m.Time = newID()[:12], "message", q.now.Unix()
	m.Expires = q.now.Add(12 * time.Hour).Unix()
	a := ntfyAlert(&m, q.token)
	q.body, _ = json.Marshal(m)
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// ntfyFromHeaders reads a PUT or POST to a topic: the body is the message.
func ntfyFromHeaders(q *request, topic string) ntfyMessage {
	m := ntfyMessage{Topic: topic, Message: firstOf(string(q.body), ntfyParam(q.r, "Message", "M"))}
	m.Title = ntfyParam(q.r, "Title", "T", "Ti")
	m.Click = ntfyParam(q.r, "Click")
	m.Attach = ntfyParam(q.r, "Attach", "A")
	if tags := ntfyParam(q.r, "Tags", "Tag", "Ta"); tags != "" {
		for _, t := range strings.Split(tags, ",") {
			if t = strings.TrimSpace(t); t != "" {
				m.Tags = append(m.Tags, t)
			}
		}
	}
	m.Markdown = ntfyBool(ntfyParam(q.r, "Markdown", "Md"))
	if strings.EqualFold(q.r.Header.Get("Content-Type"), "text/markdown") {
		m.Markdown = true
	}
	return m
}

// ntfyBool reads a yes/no parameter as ntfy does: 1, yes and true.
func ntfyBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "yes", "true":
		return true
	}
	return false
}

// ntfyError is ntfy's error body.
type ntfyError struct {
	Code  int    `json:"code"`
	HTTP  int    `json:"http"`
	Error string `json:"error"`
	Link  string `json:"link"`
}

// ntfyPriority returns the priority in force (3 by default), from the
// JSON or the Priority header.
func ntfyPriority(q *request, fromJSON int) (int, bool) {
	if fromJSON != 0 {
		return fromJSON, fromJSON >= 1 && fromJSON <= 5
	}
	v := strings.ToLower(strings.TrimSpace(ntfyParam(q.r, "Priority", "Prio", "P")))
	switch v {
	case "":
		return 3, true
	case "min":
		return 1, true
	case "low":
		return 2, true
	case "default":
		return 3, true
	case "high":
		return 4, true
	case "max", "urgent":
		return 5, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 1 && n <= 5
}

// ntfyAlert renders a message: the title, else the message's first line.
func ntfyAlert(m *ntfyMessage, token string) alerts.Alert {
	text := m.Message
	if m.Markdown {
		text = markdownText(text)
	}
	a := alerts.Alert{Source: "ntfy", URL: m.Click, ImageURL: m.Attach, Title: markdownText(m.Title)}
	switch {
	case m.Priority >= 5:
		a.Severity = alerts.SeverityCritical
	case m.Priority == 4:
		a.Severity = alerts.SeverityWarning
	default:
		a.Severity = alerts.SeverityInfo
	}
	if a.Title == "" {
		a.Title = firstLine(text)
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), a.Title))
	}
	var links []string
	for _, act := range m.Actions {
		if act.Action == "view" && act.URL != "" {
			links = append(links, firstOf(act.Label, "Open")+": "+act.URL)
			a.URL = firstOf(a.URL, act.URL)
		}
	}
	a.Body = joinBlocks(text, strings.Join(links, "\n"))
	a.Labels = labelsOf(token, "topic", m.Topic, "tags", strings.Join(m.Tags, ","))
	return a
}
