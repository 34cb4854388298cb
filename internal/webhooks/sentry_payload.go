package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The parts of Sentry's payloads Herald renders.
type (
	sentryPayload struct {
		Action string `json:"action"`
		Actor  *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"actor"`
		Data json.RawMessage `json:"data"`
	}
	sentryIssueData struct {
		Issue *sentryIssue `json:"issue"`
	}
	sentryIssue struct {
		ID         looseString   `json:"id"`
		ShortID    string        `json:"shortId"`
		Title      string        `json:"title"`
		Culprit    string        `json:"culprit"`
		Level      string        `json:"level"`
		Status     string        `json:"status"`
		Substatus  string        `json:"substatus"`
		WebURL     string        `json:"web_url"`
		Permalink  string        `json:"permalink"`
		Count      looseString   `json:"count"`
		UserCount  looseString   `json:"userCount"`
		FirstSeen  string        `json:"firstSeen"`
		Project    sentryProject `json:"project"`
		AssignedTo *struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"assignedTo"`
	}
	sentryProject struct {
		Slug string `json:"slug"`
		Name string `json:"name"`
	}
	sentryEventAlertData struct {
		Event         *sentryEvent `json:"event"`
		TriggeredRule string       `json:"triggered_rule"`
	}
	sentryEvent struct {
		EventID  string      `json:"event_id"`
		IssueID  looseString `json:"issue_id"`
		Title    string      `json:"title"`
		Message  string      `json:"message"`
		Culprit  string      `json:"culprit"`
		Level    string      `json:"level"`
		WebURL   string      `json:"web_url"`
		Datetime string      `json:"datetime"`
		Release  looseString `json:"release"`
		Tags     []sentryTag `json:"tags"`
	}
	sentryMetricAlertData struct {
		MetricAlert *struct {
			ID           looseString `json:"id"`
			Title        string      `json:"title"`
			DateStarted  string      `json:"date_started"`
			DateDetected string      `json:"date_detected"`
			DateClosed   string      `json:"date_closed"`
			Projects     []string    `json:"projects"`
			AlertRule    *struct {
				Name string `json:"name"`
			} `json:"alert_rule"`
		} `json:"metric_alert"`
		DescriptionText  string `json:"description_text"`
		DescriptionTitle string `json:"description_title"`
		WebURL           string `json:"web_url"`
	}
)

// looseString decodes a JSON string or number (Sentry sends ids and counts
// as either) as text; null leaves it empty.
type looseString string

// UnmarshalJSON implements json.Unmarshaler.
func (l *looseString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = looseString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("expected a string or a number, got %.20s", b)
	}
	*l = looseString(n)
	return nil
}

// sentryTag is one event tag: Sentry sends ["key", "value"] pairs; any
// other shape is skipped.
type sentryTag struct{ Key, Value string }

// UnmarshalJSON implements json.Unmarshaler.
func (t *sentryTag) UnmarshalJSON(b []byte) error {
	var pair []any
	if json.Unmarshal(b, &pair) == nil && len(pair) == 2 {
		k, _ := pair[0].(string)
		v, _ := pair[1].(string)
		t.Key, t.Value = k, v
	}
	return nil
}
