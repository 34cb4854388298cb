package webhooks

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestReplayWithNewDeliveryID replays captured signed deliveries through
// the real router into Redis with fresh unsigned headers (a new
// X-GitHub-Delivery, a new Request-ID and timestamp): the signature still
// matches, but the idempotency key comes from the signed body, so nothing
// new is stored.
func TestReplayWithNewDeliveryID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		sender, file string
		first, again map[string]string
	}{
		{"github", "release_published.json", ghEvent("release"),
			map[string]string{headerGitHubEvent: "release", headerGitHubDelivery: "replayed-delivery-0001"}},
		{"github", "workflow_run_failure.json", ghEvent("workflow_run"),
			map[string]string{headerGitHubEvent: "workflow_run", headerGitHubDelivery: "replayed-delivery-0002"}},
		{"sentry", "issue_created.json", sentryHeaders("issue"),
			merge(sentryHeaders("issue"), map[string]string{headerSentryRequestID: "replayed-request",
				headerSentryTimestamp: strconv.FormatInt(testNow.Add(time.Minute).Unix(), 10)})},
		{"sentry", "metric_alert_critical.json", sentryHeaders("metric_alert"),
			merge(sentryHeaders("metric_alert"), map[string]string{headerSentryRequestID: "replayed-request"})},
		{"sentry", "event_alert_triggered.json", sentryHeaders("event_alert"),
			merge(sentryHeaders("event_alert"), map[string]string{headerSentryRequestID: "replayed-request"})},
	}
	for _, tc := range cases {
		t.Run(tc.sender+"/"+tc.file, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, "e2e_routes.yaml")
			body := fixture(t, tc.sender, tc.file)
			acc := requireAccepted(t, serve(s.h, req{sender: tc.sender, body: body, header: tc.first}), 1)
			stored := len(s.tasks(t))
			if stored == 0 || len(acc.Messages) != stored {
				t.Fatalf("first delivery: %d tasks stored, %d messages answered", stored, len(acc.Messages))
			}
			resp := serve(s.h, req{sender: tc.sender, body: body, header: tc.again})
			if resp.Code != http.StatusAccepted {
				t.Fatalf("replay: status %d, want 202 (a duplicate): %s", resp.Code, resp.Body)
			}
			for _, m := range requireAccepted(t, resp, 1).Messages {
				if !m.Duplicate {
					t.Errorf("the replay under a new id stored task %s: %s", m.TaskID, resp.Body)
				}
			}
			if n := len(s.tasks(t)); n != stored {
				t.Fatalf("%d tasks after the replay, want %d", n, stored)
			}
		})
	}
}
