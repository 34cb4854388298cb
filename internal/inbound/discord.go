package inbound

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// Discord webhooks: POST /v1/inbound/discord/api[/v{n}]/webhooks/{id}/{token},
// the shape of discord.com/api/webhooks/{id}/{token}, so a tool's Discord
// URL is Herald's with the token a Herald API token; {id} is free (a
// number naming the webhook) and becomes the alert's "webhook" label.
// Client libraries (discord.js's WebhookClient) are pointed at
// /v1/inbound/discord/api as their REST base. The body is JSON (content,
// username, embeds) or multipart with the JSON in payload_json. Discord
// answers 204 without content, or 200 with the message object when the
// query says wait=true; refusals are JSON {"message", "code"}.

// discordPayload is what Discord's Execute Webhook takes.
type discordPayload struct {
	Content  string         `json:"content"`
	Username string         `json:"username"`
	Embeds   []discordEmbed `json:"embeds"`
}

// discordEmbed is one rich embed.
type discordEmbed struct {
	Title       string         `json:"title"`
	Description string         `json:"description"`
	URL         string         `json:"url"`
	Color       *int64         `json:"color"`
	Timestamp   string         `json:"timestamp"`
	Footer      *discordText   `json:"footer"`
	Author      *discordText   `json:"author"`
	Image       *discordImage  `json:"image"`
	Fields      []discordField `json:"fields"`
}

type discordText struct {
	Text string `json:"text"`
	Name string `json:"name"`
}

type discordImage struct {
	URL string `json:"url"`
}

type discordField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// discordError is Discord's error body.
type discordError struct {
	Message string         `json:"message"`
	Code    int            `json:"code"`
	Errors  map[string]any `json:"errors,omitempty"`
}

func discordFormat() *format {
	base := Prefix + "discord/api/"
	return &format{
		name: "discord",
		patterns: []string{
			"POST " + base + "webhooks/{id}/{token}",
			"POST " + base + "{version}/webhooks/{id}/{token}",
		},
		credential: func(r *http.Request, _ []byte) string { return r.PathValue("token") },
		decode:     decodeDiscord,
		answer:     answerDiscord,
		fail:       failDiscord,
	}
}

func failDiscord(w http.ResponseWriter, e *httpapi.Error) {
	status, body := e.Status, discordError{Message: e.Message}
	switch {
	case e.Status == http.StatusUnauthorized:
		body = discordError{Message: "Invalid Webhook Token", Code: 50027}
	case e.Status == http.StatusForbidden:
		body = discordError{Message: "Missing Permissions", Code: 50013}
	case e.Code == httpapi.CodeNoRoute:
		status, body = http.StatusNotFound, discordError{Message: "Unknown Channel", Code: 10003}
	case e.Status == http.StatusRequestEntityTooLarge:
		body = discordError{Message: "Request entity too large", Code: 40005}
	case e.Code == httpapi.CodeInvalidJSON:
		body = discordError{Message: "The request body contains invalid JSON.", Code: 50109}
	case len(e.Fields) > 0 && e.Fields[0].Field == "content":
		body = discordError{Message: "Cannot send an empty message", Code: 50006}
	case len(e.Fields) > 0:
		errs := map[string]any{}
		for _, f := range e.Fields {
			errs[f.Field] = map[string]any{"_errors": []map[string]string{{"code": "BASE_TYPE_INVALID", "message": f.Message}}}
		}
		body = discordError{Message: "Invalid Form Body", Code: 50035, Errors: errs}
	}
	httpapi.WriteJSON(w, status, body)
}

// discordBody returns the JSON of a post: the body itself, or the
// payload_json part of a multipart post.
func discordBody(q *request) ([]byte, *httpapi.Error) {
	mt, params, _ := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return q.body, nil
	}
	mr := multipart.NewReader(bytes.NewReader(q.body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return nil, httpapi.Invalid("no payload_json", jobs.FieldError{Field: "payload_json", Message: "a multipart post needs a payload_json part"})
		}
		if part.FormName() == "payload_json" {
			var b bytes.Buffer
			_, _ = b.ReadFrom(part)
			return b.Bytes(), nil
		}
	}
}

func decodeDiscord(q *request) (outcome, *httpapi.Error) {
	raw, e := discordBody(q)
	if e != nil {
		return outcome{}, e
	}
	var p discordPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return outcome{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "malformed JSON: %v", err)
	}
	a := discordAlert(&p)
	if a.Title == "" && a.Body == "" {
		return outcome{}, httpapi.Invalid("nothing to send", jobs.FieldError{Field: "content", Message: "content or embeds must hold some text"})
	}
	a.Labels = labelsOf(q.token, "username", p.Username, "webhook", q.r.PathValue("id"))
	q.body = raw
	return outcome{alerts: []alerts.Alert{a}}, nil
}

// discordAlert renders a payload: the title is the first embed's title,
// else the first line of the content.
func discordAlert(p *discordPayload) alerts.Alert {
	a := alerts.Alert{Source: "discord", Severity: alerts.SeverityWarning}
	content := markdownText(p.Content)
	var parts []string
	title := ""
	for i, em := range p.Embeds {
		if i == 0 {
			title = markdownText(em.Title)
			a.URL = em.URL
			if em.Color != nil {
				c := *em.Color
				a.Severity = rgbSeverity(int(c>>16&0xff), int(c>>8&0xff), int(c&0xff))
			}
			if t, err := time.Parse(time.RFC3339Nano, em.Timestamp); err == nil {
				a.Time = t.UTC()
			}
		}
		parts = append(parts, discordEmbedText(em, i > 0 || title == ""))
		if em.Image != nil {
			a.ImageURL = firstOf(a.ImageURL, em.Image.URL)
		}
	}
	if title == "" {
		title = firstLine(content)
		content = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(content), title))
	}
	a.Title = title
	a.Body = joinBlocks(append([]string{content}, parts...)...)
	if a.Title == "" {
		a.Title = firstLine(a.Body)
	}
	return a
}

// discordEmbedText renders an embed; withTitle includes its title.
func discordEmbedText(em discordEmbed, withTitle bool) string {
	var ls []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			ls = append(ls, s)
		}
	}
	if em.Author != nil {
		add(markdownText(em.Author.Name))
	}
	if withTitle {
		add(markdownText(em.Title))
	}
	add(markdownText(em.Description))
	for _, f := range em.Fields {
		add(markdownText(f.Name) + ": " + markdownText(f.Value))
	}
	if em.Footer != nil {
		add(markdownText(em.Footer.Text))
	}
	return strings.Join(ls, "\n")
}

// answerDiscord answers 204, or with ?wait=true the message object as
// Discord returns it (the fields client libraries read).
func answerDiscord(w http.ResponseWriter, q *request, _ outcome) {
	if wait, _ := strconv.ParseBool(q.r.URL.Query().Get("wait")); !wait {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var p struct {
		Content  string          `json:"content"`
		Username string          `json:"username"`
		Embeds   json.RawMessage `json:"embeds"`
	}
	_ = json.Unmarshal(q.body, &p)
	if len(p.Embeds) == 0 || string(p.Embeds) == "null" {
		p.Embeds = json.RawMessage("[]")
	}
	id := q.r.PathValue("id")
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"id": snowflake(q.now), "type": 0, "content": p.Content, "channel_id": id,
		"author":      map[string]any{"id": id, "username": firstOf(p.Username, "Herald"), "avatar": nil, "discriminator": "0000", "bot": true},
		"attachments": []any{}, "embeds": p.Embeds, "mentions": []any{}, "mention_roles": []any{},
		"pinned": false, "mention_everyone": false, "tts": false, "timestamp": q.now.UTC().Format("2006-01-02T15:04:05.000000+00:00"),
		"edited_timestamp": nil, "flags": 0, "components": []any{}, "webhook_id": id,
	})
}

// snowflake makes a Discord-style id: milliseconds since Discord's epoch
// shifted left 22 bits, the low bits from the clock's nanoseconds.
func snowflake(now time.Time) string {
	ms := now.UnixMilli() - 1420070400000
	return fmt.Sprint(ms<<22 | int64(now.Nanosecond()&0x3fffff))
}
