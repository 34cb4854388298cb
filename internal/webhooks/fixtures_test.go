package webhooks

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
)

// fixtureCase posts one fixture, correctly signed, and checks the answer.
type fixtureCase struct {
	sender string
	file   string
	header map[string]string
	// alerts is the number of alerts dispatched, compared with the fixture's
	// golden file; 0 with ignored or an error status otherwise.
	alerts  int
	ignored bool
	status  int    // error status
	code    string // error code
	field   string // a field the error must name
}

var fixtureCases = []fixtureCase{
	// Alertmanager.
	{sender: "alertmanager", file: "group.json", alerts: 2},
	{sender: "alertmanager", file: "unknown_severity.json", alerts: 1},
	{sender: "alertmanager", file: "empty_group.json", ignored: true},
	{sender: "alertmanager", file: "bad_status.json", status: 400, code: httpapi.CodeInvalidField, field: "alerts[0].status"},
	{sender: "alertmanager", file: "not_alertmanager.json", status: 400, code: httpapi.CodeInvalidField, field: "alerts"},
	{sender: "alertmanager", file: "malformed.json", status: 400, code: httpapi.CodeInvalidJSON},

	// Grafana.
	{sender: "grafana", file: "firing.json", alerts: 1},
	{sender: "grafana", file: "resolved.json", alerts: 1},
	{sender: "grafana", file: "test_notification.json", alerts: 1},
	{sender: "grafana", file: "wrong_type.json", status: 400, code: httpapi.CodeInvalidField, field: "alerts"},
	{sender: "grafana", file: "malformed.json", status: 400, code: httpapi.CodeInvalidJSON},

	// GitHub.
	{sender: "github", file: "ping.json", header: ghEvent("ping"), ignored: true},
	{sender: "github", file: "release_published.json", header: ghEvent("release"), alerts: 1},
	{sender: "github", file: "release_created.json", header: ghEvent("release"), ignored: true},
	{sender: "github", file: "workflow_run_failure.json", header: ghEvent("workflow_run"), alerts: 1},
	{sender: "github", file: "workflow_run_timed_out.json", header: ghEvent("workflow_run"), alerts: 1},
	{sender: "github", file: "workflow_run_success.json", header: ghEvent("workflow_run"), ignored: true},
	{sender: "github", file: "workflow_run_requested.json", header: ghEvent("workflow_run"), ignored: true},
	{sender: "github", file: "issues_opened.json", header: ghEvent("issues"), alerts: 1},
	{sender: "github", file: "issues_closed.json", header: ghEvent("issues"), alerts: 1},
	{sender: "github", file: "issues_labeled.json", header: ghEvent("issues"), ignored: true},
	{sender: "github", file: "pull_request_opened.json", header: ghEvent("pull_request"), alerts: 1},
	{sender: "github", file: "pull_request_merged.json", header: ghEvent("pull_request"), alerts: 1},
	{sender: "github", file: "pull_request_closed.json", header: ghEvent("pull_request"), alerts: 1},
	{sender: "github", file: "security_advisory_published.json", header: ghEvent("security_advisory"), alerts: 1},
	{sender: "github", file: "security_advisory_identifiers.json", header: ghEvent("security_advisory"), alerts: 1},
	{sender: "github", file: "security_advisory_no_cve.json", header: ghEvent("security_advisory"), alerts: 1},
	{sender: "github", file: "dependabot_alert_created.json", header: ghEvent("dependabot_alert"), alerts: 1},
	{sender: "github", file: "repository_vulnerability_alert_create.json", header: ghEvent("repository_vulnerability_alert"), alerts: 1},
	{sender: "github", file: "star_created.json", header: ghEvent("star"), ignored: true},
	{sender: "github", file: "issues_wrong_type.json", header: ghEvent("issues"), status: 400, code: httpapi.CodeInvalidField, field: "issue.number"},
	{sender: "github", file: "release_missing_object.json", header: ghEvent("release"), status: 400, code: httpapi.CodeInvalidField, field: "release"},
	{sender: "github", file: "malformed.json", header: ghEvent("issues"), status: 400, code: httpapi.CodeInvalidJSON},
	{sender: "github", file: "issues_opened.json", header: map[string]string{headerGitHubDelivery: "d-1"},
		status: 400, code: httpapi.CodeInvalidField, field: headerGitHubEvent},
	{sender: "github", file: "issues_opened.json", header: map[string]string{headerGitHubEvent: "issues"},
		status: 400, code: httpapi.CodeInvalidField, field: headerGitHubDelivery},

	// Sentry.
	{sender: "sentry", file: "issue_created.json", header: sentryHeaders("issue"), alerts: 1},
	{sender: "sentry", file: "issue_resolved.json", header: sentryHeaders("issue"), alerts: 1},
	{sender: "sentry", file: "issue_assigned.json", header: sentryHeaders("issue"), alerts: 1},
	{sender: "sentry", file: "issue_unresolved.json", header: sentryHeaders("issue"), alerts: 1},
	{sender: "sentry", file: "event_alert_triggered.json", header: sentryHeaders("event_alert"), alerts: 1},
	{sender: "sentry", file: "metric_alert_critical.json", header: sentryHeaders("metric_alert"), alerts: 1},
	{sender: "sentry", file: "metric_alert_resolved.json", header: sentryHeaders("metric_alert"), alerts: 1},
	{sender: "sentry", file: "installation_created.json", header: sentryHeaders("installation"), ignored: true},
	{sender: "sentry", file: "issue_created.json", header: sentryHeaders("comment"), ignored: true},
	{sender: "sentry", file: "event_alert_wrong_type.json", header: sentryHeaders("event_alert"), status: 400, code: httpapi.CodeInvalidField, field: "data.event.title"},
	{sender: "sentry", file: "issue_missing_object.json", header: sentryHeaders("issue"), status: 400, code: httpapi.CodeInvalidField, field: "data.issue"},
	{sender: "sentry", file: "malformed.json", header: sentryHeaders("issue"), status: 400, code: httpapi.CodeInvalidJSON},
	{sender: "sentry", file: "issue_created.json", header: map[string]string{headerSentryRequestID: "r-1", headerSentryTimestamp: strconv.FormatInt(testNow.Unix(), 10)},
		status: 400, code: httpapi.CodeInvalidField, field: headerSentryResource},

	// Generic, through the real routing file's mapping.
	{sender: "generic", file: "uptime_down.json", alerts: 1},
	{sender: "generic", file: "uptime_up.json", alerts: 1},
	{sender: "generic", file: "uptime_missing_key.json", status: 400, code: httpapi.CodeInvalidField, field: "title"},
	{sender: "generic", file: "uptime_bad_severity.json", status: 400, code: httpapi.CodeInvalidField, field: "alerts[0].severity"},
	{sender: "generic", file: "malformed.json", status: 400, code: httpapi.CodeInvalidJSON},
	{sender: "generic", file: "trailing.json", status: 400, code: httpapi.CodeInvalidJSON},
}

func ghEvent(event string) map[string]string {
	return map[string]string{headerGitHubEvent: event, headerGitHubDelivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
}

func sentryHeaders(resource string) map[string]string {
	return map[string]string{
		headerSentryResource:  resource,
		headerSentryRequestID: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
		headerSentryTimestamp: strconv.FormatInt(testNow.Unix(), 10),
	}
}

// TestFixtures posts every fixture with valid credentials and checks the
// answer and the exact alerts dispatched (golden files; go test -update
// rewrites them).
func TestFixtures(t *testing.T) {
	t.Parallel()
	for _, tc := range fixtureCases {
		name := tc.sender + "/" + tc.file
		if ev := tc.header[headerGitHubEvent] + tc.header[headerSentryResource]; ev != "" {
			name += "/" + ev
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			h := newHandler(t, rec, nil)
			resp := serve(h, req{sender: tc.sender, body: fixture(t, tc.sender, tc.file), header: tc.header})
			switch {
			case tc.status != 0:
				e := requireError(t, resp, tc.status, tc.code)
				if tc.field != "" && !namesField(e, tc.field) {
					t.Fatalf("error does not name %q: %s", tc.field, resp.Body)
				}
				rec.requireNothing(t)
			case tc.ignored:
				requireIgnored(t, resp)
				rec.requireNothing(t)
			default:
				acc := requireAccepted(t, resp, tc.alerts)
				if len(acc.Messages) != tc.alerts {
					t.Fatalf("%d messages in the answer, want %d", len(acc.Messages), tc.alerts)
				}
				got := rec.dispatched()
				if len(got) != tc.alerts {
					t.Fatalf("%d alerts dispatched, want %d", len(got), tc.alerts)
				}
				for i := range got {
					if err := got[i].Validate(); err != nil {
						t.Fatalf("alert %d does not validate: %v", i, err)
					}
				}
				checkGolden(t, tc.sender, tc.file, got)
			}
		})
	}
}

// namesField reports whether an error's field list names field.
func namesField(e httpapi.ErrorDetail, field string) bool {
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TestGenericUnknownName checks that an unknown generic webhook, or any
// when none are configured, is a JSON 404.
func TestGenericUnknownName(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHandler(t, rec, nil)
	resp := serve(h, req{sender: "generic", path: pathGeneric + "nope", body: fixture(t, "generic", "uptime_down.json")})
	requireError(t, resp, http.StatusNotFound, httpapi.CodeNotFound)
	rec.requireNothing(t)

	h = newHandler(t, rec, func(c *Config) { c.Generic = nil })
	resp = serve(h, req{sender: "generic", body: fixture(t, "generic", "uptime_down.json")})
	requireError(t, resp, http.StatusNotFound, httpapi.CodeNotFound)
	rec.requireNothing(t)
}
