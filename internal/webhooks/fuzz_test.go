package webhooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
)

// checkDecoded is the property every decoder keeps, whatever the input:
// either a client error (*httpapi.Error, 4xx, with a code and message), or
// an ignored result without alerts, or alerts that validate and normalise
// as the dispatcher will.
func checkDecoded(t *testing.T, d decoded, e *httpapi.Error) {
	t.Helper()
	if e != nil {
		if e.Status < 400 || e.Status > 499 || e.Code == "" || e.Message == "" {
			t.Fatalf("bad error: %+v", e)
		}
		return
	}
	if d.ignored != "" {
		if len(d.alerts) != 0 {
			t.Fatalf("ignored (%s) with %d alerts", d.ignored, len(d.alerts))
		}
		return
	}
	for i, a := range d.alerts {
		if err := a.Validate(); err != nil {
			t.Fatalf("alert %d does not validate: %v\n%+v", i, err, a)
		}
		if err := a.Normalize(testNow); err != nil {
			t.Fatalf("alert %d does not normalise: %v\n%+v", i, err, a)
		}
	}
}

func FuzzAlertmanager(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		d, e := decodeAlertmanager(body)
		checkDecoded(t, d, e)
	})
}

func FuzzGrafana(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		d, e := decodeGrafana(body)
		checkDecoded(t, d, e)
	})
}

func FuzzGitHub(f *testing.F) {
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		d, e := decodeGitHub(event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", bodyDigest(body), body)
		checkDecoded(t, d, e)
	})
}

func FuzzSentry(f *testing.F) {
	f.Fuzz(func(t *testing.T, resource string, body []byte) {
		d, e := decodeSentry(resource, "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", bodyDigest(body), body)
		checkDecoded(t, d, e)
	})
}

func FuzzGeneric(f *testing.F) {
	g, ok := genericTable(f).GenericWebhook("uptime")
	if !ok {
		f.Fatal("the test routing file has no uptime webhook")
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, e := decodeGeneric("uptime", g, body)
		checkDecoded(t, d, e)
	})
}

// fuzzSeeds lists, per fuzz target, the fixtures of its seed corpus and the
// string argument that precedes the body (GitHub event, Sentry resource).
var fuzzSeeds = map[string][]struct{ sender, file, arg string }{
	"FuzzAlertmanager": {
		{"alertmanager", "group.json", ""}, {"alertmanager", "unknown_severity.json", ""},
		{"alertmanager", "empty_group.json", ""}, {"alertmanager", "bad_status.json", ""},
		{"alertmanager", "malformed.json", ""},
	},
	"FuzzGrafana": {
		{"grafana", "firing.json", ""}, {"grafana", "resolved.json", ""},
		{"grafana", "test_notification.json", ""}, {"grafana", "wrong_type.json", ""},
	},
	"FuzzGitHub": {
		{"github", "ping.json", "ping"}, {"github", "release_published.json", "release"},
		{"github", "workflow_run_failure.json", "workflow_run"}, {"github", "workflow_run_timed_out.json", "workflow_run"},
		{"github", "issues_opened.json", "issues"}, {"github", "issues_closed.json", "issues"},
		{"github", "pull_request_opened.json", "pull_request"}, {"github", "pull_request_merged.json", "pull_request"},
		{"github", "security_advisory_published.json", "security_advisory"},
		{"github", "dependabot_alert_created.json", "dependabot_alert"},
		{"github", "repository_vulnerability_alert_create.json", "repository_vulnerability_alert"},
		{"github", "star_created.json", "star"}, {"github", "issues_wrong_type.json", "issues"},
	},
	"FuzzSentry": {
		{"sentry", "issue_created.json", "issue"}, {"sentry", "issue_assigned.json", "issue"},
		{"sentry", "issue_unresolved.json", "issue"}, {"sentry", "event_alert_triggered.json", "event_alert"},
		{"sentry", "metric_alert_critical.json", "metric_alert"}, {"sentry", "metric_alert_resolved.json", "metric_alert"},
		{"sentry", "installation_created.json", "installation"}, {"sentry", "event_alert_wrong_type.json", "event_alert"},
	},
	"FuzzGeneric": {
		{"generic", "uptime_down.json", ""}, {"generic", "uptime_up.json", ""},
		{"generic", "uptime_missing_key.json", ""}, {"generic", "trailing.json", ""},
	},
}

// TestFuzzSeedCorpus keeps testdata/fuzz/<target>/ in step with the
// fixtures it is made from (go test -update rewrites it), so the seeds go
// test runs are the fixtures of today.
func TestFuzzSeedCorpus(t *testing.T) {
	t.Parallel()
	for target, seeds := range fuzzSeeds {
		dir := filepath.Join("testdata", "fuzz", target)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range seeds {
			var b strings.Builder
			b.WriteString("go test fuzz v1\n")
			if target == "FuzzGitHub" || target == "FuzzSentry" {
				fmt.Fprintf(&b, "string(%q)\n", s.arg)
			}
			fmt.Fprintf(&b, "[]byte(%q)\n", fixture(t, s.sender, s.file))
			path := filepath.Join(dir, strings.TrimSuffix(s.file, ".json"))
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != b.String() {
				t.Errorf("%s is missing or stale (%v): run go test -update", path, err)
			}
		}
	}
}
