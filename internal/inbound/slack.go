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

// Slack incoming webhooks: POST /v1/inbound/slack/{token}, the token in
// the URL as Slack's secret is (hooks.slack.com/services/…). The body is
// the JSON Slack takes (text, blocks, attachments), or the legacy form
// field payload holding it. Slack answers 200 with the text "ok", and
// refusals with a text code: 400 invalid_payload or no_text, 403
// invalid_token, 404 channel_not_found; tools compare that text.

// slackPayload is what Slack's incoming webhooks take.
type slackPayload struct {
	Text        string            `json:"text"`
	Blocks      []slackBlock      `json:"blocks"`
	Attachments []slackAttachment `json:"attachments"`
	Channel     string            `json:"channel"`
	Username    string            `json:"username"`
}

// slackBlock is one Block Kit block: section, header, context, divider,
// image (others are skipped).
type slackBlock struct {
	Type     string            `json:"type"`
	Text     *slackTextObject  `json:"text"`
	Fields   []slackTextObject `json:"fields"`
	Elements []slackTextObject `json:"elements"`
	ImageURL string            `json:"image_url"`
	AltText  string            `json:"alt_text"`
}

// slackTextObject is a text object (plain_text or mrkdwn); in a context
// block an element may also be an image, which has no text.
type slackTextObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// slackAttachment is a legacy attachment.
type slackAttachment struct {
	Color      string       `json:"color"`
	Pretext    string       `json:"pretext"`
	AuthorName string       `json:"author_name"`
	Title      string       `json:"title"`
	TitleLink  string       `json:"title_link"`
	Text       string       `json:"text"`
	Fallback   string       `json:"fallback"`
	Fields     []slackField `json:"fields"`
	ImageURL   string       `json:"image_url"`
	Footer     string       `json:"footer"`
	Blocks     []slackBlock `json:"blocks"`
}

// slackField is one field of an attachment.
type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

func slackFormat() *format {
	return &format{
		name:       "slack",
		patterns:   []string{"POST " + Prefix + "slack/{token}"},
		credential: func(r *http.Request, _ []byte) string { return r.PathValue("token") },
		decode:     decodeSlack,
		answer: func(w http.ResponseWriter, _ *request, _ outcome) {
			writeText(w, http.StatusOK, "ok")
		},
		fail: func(w http.ResponseWriter, e *httpapi.Error) {
			writeText(w, slackStatus(e), slackCode(e))
		},
	}
}

// slackCode is the text Slack answers a refusal with.
func slackCode(e *httpapi.Error) string {
	switch {
	case e.Status == http.StatusUnauthorized:
		return "invalid_token"
	case e.Status == http.StatusForbidden:
		return "action_prohibited"
	case e.Code == httpapi.CodeNoRoute:
		return "channel_not_found"
	case e.Status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case e.Status >= 500:
		return "service_unavailable"
	case len(e.Fields) > 0 && e.Fields[0].Field == "text":
		return "no_text"
	}
	return "invalid_payload"
}

func slackStatus(e *httpapi.Error) int {
	switch {
	case e.Status == http.StatusUnauthorized:
		return http.StatusForbidden
	case e.Code == httpapi.CodeNoRoute:
		return http.StatusNotFound
	}
	return e.Status
}

// writeText answers with a plain text body.
func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text))
}

// decodeSlack reads the JSON body, or the form field payload.
func decodeSlack(q *request) (outcome, *httpapi.Error) {
	body := q.body
	if strings.HasPrefix(q.r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		v, err := url.ParseQuery(string(body))
		if err != nil || v.Get("payload") == "" {
			return outcome{}, httpapi.Invalid("no payload", jobs.FieldError{Field: "payload", Message: "is required in a form post"})
		}
		body = []byte(v.Get("payload"))
	}
	var p slackPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "malformed JSON: %v", err)
	}
	a := slackAlert(&p)
	if a.Title == "" && a.Body == "" {
		return outcome{}, httpapi.Invalid("nothing to send", jobs.FieldError{Field: "text", Message: "text, blocks or attachments must hold some text"})
	}
	a.Labels = labelsOf(q.token, "channel", p.Channel, "username", p.Username)
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// slackAlert renders a payload: the title is the first header block, else
// the first attachment's title, else the first line of the text.
func slackAlert(p *slackPayload) alerts.Alert {
	a := alerts.Alert{Source: "slack", Severity: alerts.SeverityWarning}
	text := slackText(p.Text)
	var parts []string
	header, blocks := slackBlocks(p.Blocks)
	parts = append(parts, blocks...)
	for i, at := range p.Attachments {
		if i == 0 {
			a.Severity = colorSeverity(at.Color)
			a.URL = at.TitleLink
			header = firstOf(header, slackText(at.Title))
		}
		parts = append(parts, slackAttachmentText(at, i > 0 || header != strings.TrimSpace(slackText(at.Title))))
		a.ImageURL = firstOf(a.ImageURL, at.ImageURL)
	}
	switch {
	case header != "":
		a.Title = header
		parts = append([]string{text}, parts...)
	default:
		a.Title = firstLine(text)
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), a.Title))
		parts = append([]string{rest}, parts...)
		if a.Title == "" && len(p.Attachments) > 0 {
			a.Title = slackText(p.Attachments[0].Fallback)
		}
	}
	a.Body = joinBlocks(parts...)
	if a.Title == "" {
		a.Title = firstLine(a.Body)
	}
	return a
}

// slackBlocks renders Block Kit blocks: the first header's text apart,
// the other blocks as paragraphs.
func slackBlocks(bs []slackBlock) (header string, parts []string) {
	for _, b := range bs {
		switch b.Type {
		case "header":
			if b.Text != nil && header == "" {
				header = slackText(b.Text.Text)
				continue
			}
			if b.Text != nil {
				parts = append(parts, slackText(b.Text.Text))
			}
		case "section":
			var ls []string
			if b.Text != nil {
				ls = append(ls, slackText(b.Text.Text))
			}
			for _, f := range b.Fields {
				ls = append(ls, slackText(f.Text))
			}
			parts = append(parts, strings.Join(ls, "\n"))
		case "context":
			var ls []string
			for _, e := range b.Elements {
				if e.Text != "" {
					ls = append(ls, slackText(e.Text))
				}
			}
			parts = append(parts, strings.Join(ls, " · "))
		case "divider":
			parts = append(parts, "———")
		case "image":
			parts = append(parts, firstOf(b.AltText, "image")+": "+b.ImageURL)
		}
	}
	return header, parts
}

// slackAttachmentText renders a legacy attachment; withTitle includes its
// title (the first attachment's is the alert's title).
func slackAttachmentText(at slackAttachment, withTitle bool) string {
	var ls []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			ls = append(ls, s)
		}
	}
	add(slackText(at.Pretext))
	add(slackText(at.AuthorName))
	if withTitle {
		add(slackText(at.Title))
	}
	add(slackText(at.Text))
	for _, f := range at.Fields {
		switch {
		case f.Title != "" && f.Value != "":
			add(slackText(f.Title) + ": " + slackText(f.Value))
		default:
			add(slackText(f.Title + f.Value))
		}
	}
	_, bs := slackBlocks(at.Blocks)
	for _, b := range bs {
		add(b)
	}
	add(slackText(at.Footer))
	return strings.Join(ls, "\n")
}

// colorSeverity reads a severity from an attachment or embed colour:
// Slack's words danger, warning and good, or a hex colour whose hue is
// red (critical), orange to yellow (warning) or anything else (info). No
// colour is a warning.
func colorSeverity(c string) alerts.Severity {
	c = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c), "#"))
	switch c {
	case "":
		return alerts.SeverityWarning
	case "danger":
		return alerts.SeverityCritical
	case "warning":
		return alerts.SeverityWarning
	case "good":
		return alerts.SeverityInfo
	}
	n, err := strconv.ParseUint(c, 16, 32)
	if err != nil || len(c) != 6 {
		return alerts.SeverityWarning
	}
	return rgbSeverity(int(n>>16&0xff), int(n>>8&0xff), int(n&0xff))
}

// rgbSeverity classes a colour: reds (red well above green and blue:
// Slack's danger, Discord's and Alertmanager's reds) critical, oranges and
// yellows warning, the rest (greens, blues, greys) info.
func rgbSeverity(r, g, b int) alerts.Severity {
	switch {
	case r >= 0x90 && g <= r/2 && b <= r/2:
		return alerts.SeverityCritical
	case r >= 0xc0 && g > r/2 && b < 0x80:
		return alerts.SeverityWarning
	}
	return alerts.SeverityInfo
}
