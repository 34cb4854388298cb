package webhooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

// amBody builds a one-alert Alertmanager payload.
func amBody(t *testing.T, status, startsAt string, labels map[string]string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"version": "4", "status": status, "receiver": "herald",
		"alerts": []map[string]any{{
			"status": status, "labels": labels, "annotations": map[string]string{},
			"startsAt": startsAt, "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "00aa11bb22cc33dd",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeOne(t *testing.T, body []byte) alerts.Alert {
	t.Helper()
	d, e := decodeAlertmanager(body)
	if e != nil {
		t.Fatalf("decode: %v", e)
	}
	if len(d.alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(d.alerts))
	}
	return d.alerts[0]
}

// TestAlertmanagerFingerprints checks what the fingerprint makes of
// Alertmanager's notifications: repeats of a firing alert share one (the
// idempotency window folds them), its resolution and a later new firing
// get their own.
func TestAlertmanagerFingerprints(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"alertname": "X"}
	firing := decodeOne(t, amBody(t, "firing", "2026-11-30T10:00:00Z", labels))
	repeat := decodeOne(t, amBody(t, "firing", "2026-11-30T10:00:00Z", labels))
	resolved := decodeOne(t, amBody(t, "resolved", "2026-11-30T10:00:00Z", labels))
	again := decodeOne(t, amBody(t, "firing", "2026-11-30T11:00:00Z", labels))
	if firing.Fingerprint != repeat.Fingerprint {
		t.Fatalf("a repeat has another fingerprint: %q vs %q", firing.Fingerprint, repeat.Fingerprint)
	}
	if firing.Fingerprint == resolved.Fingerprint || firing.Fingerprint == again.Fingerprint || resolved.Fingerprint == again.Fingerprint {
		t.Fatalf("fingerprints collide: %q %q %q", firing.Fingerprint, resolved.Fingerprint, again.Fingerprint)
	}
}

// TestSeverityWords checks the severity mapping of Alertmanager labels.
func TestSeverityWords(t *testing.T) {
	t.Parallel()
	cases := map[string]alerts.Severity{
		"critical": alerts.SeverityCritical, "page": alerts.SeverityCritical, "ERROR": alerts.SeverityCritical,
		" fatal ": alerts.SeverityCritical, "high": alerts.SeverityCritical,
		"warning": alerts.SeverityWarning, "warn": alerts.SeverityWarning, "moderate": alerts.SeverityWarning,
		"info": alerts.SeverityInfo, "low": alerts.SeverityInfo, "none": alerts.SeverityInfo, "debug": alerts.SeverityInfo,
		"": alerts.SeverityWarning, "bananas": alerts.SeverityWarning,
	}
	for word, want := range cases {
		a := decodeOne(t, amBody(t, "firing", "2026-11-30T10:00:00Z", map[string]string{"alertname": "X", "severity": word}))
		if a.Severity != want {
			t.Errorf("severity label %q gave %q, want %q", word, a.Severity, want)
		}
	}
	for word, want := range map[string]alerts.Severity{"critical": alerts.SeverityCritical, "high": alerts.SeverityCritical,
		"moderate": alerts.SeverityWarning, "medium": alerts.SeverityWarning, "low": alerts.SeverityWarning, "": alerts.SeverityWarning} {
		if got := advisorySeverity(word); got != want {
			t.Errorf("advisory severity %q gave %q, want %q", word, got, want)
		}
	}
}

// TestClip checks shortening by characters with an ellipsis.
func TestClip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven ch…"},
		{"ünïcödé wörds", 8, "ünïcödé…"},
		{"word  and spaces", 7, "word…"},
		{"x", 0, ""},
		{"bad \xff byte", 20, "bad \uFFFD byte"},
	}
	for _, tc := range cases {
		got := clip(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > tc.max && tc.max > 0 {
			t.Errorf("clip(%q, %d) is %d characters long", tc.in, tc.max, n)
		}
	}
}

// TestFinishFitsLimits gives finish an alert past every limit: it comes
// out valid, except for too many labels, which is a 400 naming the field.
func TestFinishFitsLimits(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"": "dropped", "empty": "", strings.Repeat("k", alerts.MaxLabelLen+1): "dropped",
		"long": strings.Repeat("v", 5000)}
	batch := []alerts.Alert{{
		Title:       "  first line\nsecond\tline " + strings.Repeat("t", 2*alerts.MaxTitleLen),
		Body:        strings.Repeat("b", 2*alerts.MaxBodyLen),
		URL:         "javascript:alert(1)",
		Labels:      labels,
		Source:      strings.Repeat("s", 100),
		Fingerprint: strings.Repeat("f", 500),
		Severity:    alerts.SeverityInfo,
		Status:      alerts.StatusFiring,
	}}
	if e := finish(batch, "fallback"); e != nil {
		t.Fatalf("finish: %v", e)
	}
	a := batch[0]
	if err := a.Validate(); err != nil {
		t.Fatalf("fitted alert invalid: %v", err)
	}
	if !strings.HasPrefix(a.Title, "first line second line ttt") || !strings.HasSuffix(a.Title, ellipsis) {
		t.Errorf("title %.40q…", a.Title)
	}
	if a.URL != "" {
		t.Errorf("URL %q kept", a.URL)
	}
	if len(a.Labels) != 1 || utf8.RuneCountInString("long"+a.Labels["long"]) > alerts.MaxLabelLen {
		t.Errorf("labels not fitted: %d labels", len(a.Labels))
	}
	if !strings.HasPrefix(a.Fingerprint, "sha256:") {
		t.Errorf("long fingerprint not digested: %.40q", a.Fingerprint)
	}

	blank := []alerts.Alert{{Title: " \n ", Severity: alerts.SeverityInfo}}
	if e := finish(blank, "fallback title"); e != nil || blank[0].Title != "fallback title" {
		t.Fatalf("blank title: %v %q", e, blank[0].Title)
	}

	many := map[string]string{}
	for i := range alerts.MaxLabels + 1 {
		many[fmt.Sprintf("l%d", i)] = "v"
	}
	tooMany := []alerts.Alert{{Title: "t", Labels: many}}
	e := finish(tooMany, "x")
	if e == nil || e.Code != httpapi.CodeInvalidField || e.Status != 400 || len(e.Fields) == 0 || e.Fields[0].Field != "alerts[0].labels" {
		t.Fatalf("too many labels: %+v", e)
	}
}

// TestGitHubClipsSenderText checks that long issue text is shortened, not
// refused.
func TestGitHubClipsSenderText(t *testing.T) {
	t.Parallel()
	body, _ := json.Marshal(map[string]any{
		"action": "opened",
		"issue": map[string]any{"number": 1, "title": strings.Repeat("T", 3000), "body": strings.Repeat("B ", 20000),
			"html_url": "https://github.com/o/r/issues/1", "user": map[string]any{"login": "u"}},
		"repository": map[string]any{"full_name": "o/r"},
	})
	d, e := decodeGitHub("issues", "d-1", bodyDigest(body), body)
	if e != nil || len(d.alerts) != 1 {
		t.Fatalf("decode: %v %+v", e, d)
	}
	a := d.alerts[0]
	if n := utf8.RuneCountInString(a.Title); n != alerts.MaxTitleLen {
		t.Errorf("title is %d characters, want clipped to %d", n, alerts.MaxTitleLen)
	}
	if n := utf8.RuneCountInString(a.Body); n > summaryLen+100 {
		t.Errorf("body is %d characters, want about %d", n, summaryLen)
	}
}

// TestSentryLooseIDs checks that ids and counts decode from strings and
// numbers alike, and anything else is a 400.
func TestSentryLooseIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []string{`"123"`, `123`, `null`} {
		body := []byte(`{"action": "created", "data": {"issue": {"id": ` + id + `, "title": "x", "count": 5}}}`)
		if _, e := decodeSentry("issue", "r", bodyDigest(body), body); e != nil {
			t.Errorf("id %s: %v", id, e)
		}
	}
	body := []byte(`{"action": "created", "data": {"issue": {"id": {"nested": 1}, "title": "x"}}}`)
	if _, e := decodeSentry("issue", "r", bodyDigest(body), body); e == nil || e.Status != 400 {
		t.Errorf("object id accepted: %v", e)
	}
}

// TestSignedFingerprintsFollowTheBody checks that the idempotency key of a
// signed webhook comes from the signed body, never from the unsigned
// delivery or request id: the same body under another id keeps its key,
// another body gets another one.
func TestSignedFingerprintsFollowTheBody(t *testing.T) {
	t.Parallel()
	fp := func(d decoded, e *httpapi.Error) string {
		t.Helper()
		if e != nil || len(d.alerts) != 1 {
			t.Fatalf("decode: %v %+v", e, d)
		}
		return d.alerts[0].Fingerprint
	}
	metric := fixture(t, "sentry", "metric_alert_critical.json")
	other := fixture(t, "sentry", "metric_alert_resolved.json")
	a := fp(decodeSentry("metric_alert", "request-1", bodyDigest(metric), metric))
	b := fp(decodeSentry("metric_alert", "request-2", bodyDigest(metric), metric))
	c := fp(decodeSentry("metric_alert", "request-1", bodyDigest(other), other))
	if a != b {
		t.Errorf("a new Request-ID changed the Sentry fingerprint: %q vs %q", a, b)
	}
	if a == c || !strings.HasPrefix(a, "sentry/metric_alert/") {
		t.Errorf("Sentry fingerprints %q and %q: want sentry/metric_alert/<digest>, distinct per body", a, c)
	}
	issue := fixture(t, "github", "issues_opened.json")
	g1 := fp(decodeGitHub("issues", "delivery-1", bodyDigest(issue), issue))
	g2 := fp(decodeGitHub("issues", "delivery-2", bodyDigest(issue), issue))
	if g1 != g2 || g1 != "github/issues/"+bodyDigest(issue) {
		t.Errorf("GitHub fingerprints %q and %q: want both github/issues/%s", g1, g2, bodyDigest(issue))
	}
}
