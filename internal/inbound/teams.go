package inbound

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Microsoft Teams: POST /v1/inbound/teams/{token}, the token in the URL
// as an incoming webhook's or a Workflows trigger's secret is. Two bodies:
// the connector's MessageCard (title, text, themeColor, sections with
// facts, potentialAction links), answered as the connector did, 200 with
// the text "1"; and the Workflows message whose attachments[].content is
// an Adaptive Card (TextBlock, RichTextBlock, FactSet, Container,
// ColumnSet, Image, Action.OpenUrl), answered as a Workflows trigger does,
// 202 with no body. Refusals: the connector's 400 text "Summary or Text
// is required." for an empty card; Workflows' JSON {"error": {"code",
// "message"}} otherwise.

// teamsPayload holds both shapes; Type "MessageCard" tells the first.
type teamsPayload struct {
	Type            string          `json:"@type"`
	Title           string          `json:"title"`
	Summary         string          `json:"summary"`
	Text            string          `json:"text"`
	ThemeColor      string          `json:"themeColor"`
	Sections        []teamsSection  `json:"sections"`
	PotentialAction []teamsAction   `json:"potentialAction"`
	Attachments     []teamsAttached `json:"attachments"`
}

type teamsSection struct {
	ActivityTitle    string `json:"activityTitle"`
	ActivitySubtitle string `json:"activitySubtitle"`
	Text             string `json:"text"`
	Facts            []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"facts"`
}

type teamsAction struct {
	Name    string `json:"name"`
	Targets []struct {
		URI string `json:"uri"`
	} `json:"targets"`
}

type teamsAttached struct {
	ContentType string    `json:"contentType"`
	Content     *adaptive `json:"content"`
}

// adaptive is an Adaptive Card element, the card itself included: the
// fields of the element types Herald reads.
type adaptive struct {
	Type    string      `json:"type"`
	Text    string      `json:"text"`
	Color   string      `json:"color"`
	Weight  string      `json:"weight"`
	Style   string      `json:"style"`
	URL     string      `json:"url"`
	Title   string      `json:"title"`
	Value   string      `json:"value"`
	Body    []*adaptive `json:"body"`
	Items   []*adaptive `json:"items"`
	Columns []*adaptive `json:"columns"`
	Inlines []*adaptive `json:"inlines"`
	Facts   []*adaptive `json:"facts"`
	Actions []*adaptive `json:"actions"`
}

// isMessageCard tells the connector's body from a Workflows one, for the
// answer.
func isMessageCard(body []byte) bool {
	var p struct {
		Type string `json:"@type"`
	}
	_ = json.Unmarshal(body, &p)
	return strings.EqualFold(p.Type, "MessageCard")
}

func teamsFormat() *format {
	f := &format{
		name:       "teams",
		patterns:   []string{"POST " + Prefix + "teams/{token}"},
		credential: func(r *http.Request, _ []byte) string { return r.PathValue("token") },
		decode:     decodeTeams,
		answer: func(w http.ResponseWriter, q *request, _ outcome) {
			if isMessageCard(q.body) {
				writeText(w, http.StatusOK, "1")
				return
			}
			w.WriteHeader(http.StatusAccepted)
		},
	}
	f.fail = func(w http.ResponseWriter, e *httpapi.Error) {
		if len(e.Fields) > 0 && e.Fields[0].Field == "text" {
			writeText(w, http.StatusBadRequest, "Summary or Text is required.")
			return
		}
		code := "BadRequest"
		switch {
		case e.Status == http.StatusUnauthorized, e.Status == http.StatusForbidden:
			code = "DirectApiAuthorizationRequired"
		case e.Code == httpapi.CodeNoRoute:
			code = "WorkflowTriggerNotFound"
		case e.Code == httpapi.CodeInvalidJSON:
			code = "InvalidRequestContent"
		case e.Status >= 500:
			code = "ServiceUnavailable"
		}
		httpapi.WriteJSON(w, e.Status, map[string]any{"error": map[string]string{"code": code, "message": e.Message}})
	}
	return f
}

func decodeTeams(q *request) (outcome, *httpapi.Error) {
	var p teamsPayload
	if err := json.Unmarshal(q.body, &p); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "The request content is not valid JSON: %v", err)
	}
	var a alerts.Alert
	if strings.EqualFold(p.Type, "MessageCard") {
		a = messageCardAlert(&p)
	} else {
		a = workflowAlert(&p)
	}
	if a.Title == "" && a.Body == "" {
		return outcome{}, httpapi.Invalid("nothing to send", jobs.FieldError{Field: "text", Message: "the card holds no text"})
	}
	a.Source = "teams"
	a.Labels = labelsOf(q.token)
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// messageCardAlert renders a connector MessageCard.
func messageCardAlert(p *teamsPayload) alerts.Alert {
	a := alerts.Alert{Severity: colorSeverity(p.ThemeColor)}
	a.Title = teamsText(firstOf(p.Title, p.Summary))
	parts := []string{teamsText(p.Text)}
	for _, s := range p.Sections {
		ls := []string{teamsText(s.ActivityTitle), teamsText(s.ActivitySubtitle), teamsText(s.Text)}
		for _, f := range s.Facts {
			ls = append(ls, teamsText(f.Name)+": "+teamsText(f.Value))
		}
		parts = append(parts, joinLines(ls))
	}
	var links []string
	for _, act := range p.PotentialAction {
		for _, t := range act.Targets {
			links = append(links, firstOf(act.Name, "Link")+": "+t.URI)
			a.URL = firstOf(a.URL, t.URI)
		}
	}
	a.Body = joinBlocks(append(parts, strings.Join(links, "\n"))...)
	if a.Title == "" {
		a.Title = firstLine(a.Body)
	}
	return a
}

// workflowAlert renders the Adaptive Cards of a Workflows message: the
// first TextBlock is the title, its colour the severity.
func workflowAlert(p *teamsPayload) alerts.Alert {
	a := alerts.Alert{Severity: alerts.SeverityWarning}
	var ls []string
	for _, at := range p.Attachments {
		if at.Content == nil {
			continue
		}
		walkAdaptive(at.Content, &a, &ls)
	}
	if len(ls) > 0 && a.Title == "" {
		a.Title, ls = ls[0], ls[1:]
	}
	a.Body = joinLines(ls)
	return a
}

// walkAdaptive renders one element and its children in document order.
func walkAdaptive(e *adaptive, a *alerts.Alert, ls *[]string) {
	switch e.Type {
	case "Container":
		if a.Title == "" {
			a.Severity = adaptiveSeverity(e.Style, a.Severity)
		}
	case "TextBlock":
		t := teamsText(e.Text)
		if a.Title == "" && len(*ls) == 0 && strings.TrimSpace(t) != "" {
			a.Title = t
			a.Severity = adaptiveSeverity(e.Color, a.Severity)
			return
		}
		*ls = append(*ls, t)
	case "TextRun":
		*ls = append(*ls, teamsText(e.Text))
	case "Fact":
		*ls = append(*ls, teamsText(e.Title)+": "+teamsText(e.Value))
	case "Image":
		a.ImageURL = firstOf(a.ImageURL, e.URL)
	case "Action.OpenUrl":
		*ls = append(*ls, firstOf(e.Title, "Link")+": "+e.URL)
		a.URL = firstOf(a.URL, e.URL)
	}
	for _, group := range [][]*adaptive{e.Body, e.Items, e.Columns, e.Inlines, e.Facts, e.Actions} {
		for _, c := range group {
			if c == nil {
				continue
			}
			if c.Type == "" && c.Title != "" { // a fact carries no type
				c.Type = "Fact"
			}
			walkAdaptive(c, a, ls)
		}
	}
}

// teamsText is a card's text as plain text: Teams renders Markdown and
// HTML character references (Gatus writes "&#x26D1;") in it.
func teamsText(s string) string { return markdownText(html.UnescapeString(s)) }

// adaptiveSeverity reads a TextBlock colour or a Container style: attention is critical,
// warning a warning, good an info.
func adaptiveSeverity(color string, def alerts.Severity) alerts.Severity {
	switch strings.ToLower(color) {
	case "attention":
		return alerts.SeverityCritical
	case "warning":
		return alerts.SeverityWarning
	case "good":
		return alerts.SeverityInfo
	}
	return def
}

// joinLines joins the non-blank lines with new lines.
func joinLines(ls []string) string {
	out := ls[:0:0]
	for _, l := range ls {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
