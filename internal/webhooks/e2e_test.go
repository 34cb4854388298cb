package webhooks

import (
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// stack is the receivers on the real alerts.Router over a jobs.Enqueuer on
// miniredis, the router keeping threads there as in production.
type stack struct {
	mr        *miniredis.Miniredis
	rdb       *redis.Client
	router    *alerts.Router
	inspector *asynq.Inspector
	h         http.Handler
}

func newStack(t *testing.T, routes string) *stack {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	table, err := alerts.LoadRoutes(filepath.Join("testdata", routes))
	if err != nil {
		t.Fatal(err)
	}
	router, err := alerts.NewRouter(table, enq, alerts.RouterConfig{
		Logger: slog.New(slog.DiscardHandler),
		Now:    func() time.Time { return testNow },
		Redis:  rdb,
	})
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = insp.Close() })
	cfg := testConfig(t, router)
	cfg.Generic = GenericFromRouter(router)
	h, err := Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &stack{mr: mr, rdb: rdb, router: router, inspector: insp, h: h}
}

// tasks returns the pending SendMessage payloads of every queue.
func (s *stack) tasks(t *testing.T) []jobs.SendMessage {
	t.Helper()
	var out []jobs.SendMessage
	for _, q := range []string{jobs.QueueCritical, jobs.QueueDefault, jobs.QueueLow} {
		infos, err := s.inspector.ListPendingTasks(q)
		if errors.Is(err, asynq.ErrQueueNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("list %s: %v", q, err)
		}
		for _, info := range infos {
			m, err := jobs.Decode(info.Payload)
			if err != nil {
				t.Fatalf("stored payload does not decode: %v", err)
			}
			out = append(out, m)
		}
	}
	return out
}

// e2eCases are, per receiver, a first payload and a second, different one.
var e2eCases = []struct {
	sender        string
	first, second string
	header        map[string]string
	// secondHeader, when set, replaces header for the second payload.
	secondHeader map[string]string
	title        string // in the first payload's message
}{
	{sender: "alertmanager", first: "group.json", second: "unknown_severity.json", title: "Disk /var/lib/postgresql on db-1 is 97% full"},
	{sender: "grafana", first: "firing.json", second: "resolved.json", title: "checkout-api p99 latency is 2.4s"},
	{sender: "github", first: "release_published.json", second: "workflow_run_failure.json", header: ghEvent("release"),
		secondHeader: map[string]string{headerGitHubEvent: "workflow_run", headerGitHubDelivery: "a-second-delivery"},
		title:        "Release Herald 1.4 (v1.4.0) published in herald-dev/herald"},
	{sender: "sentry", first: "event_alert_triggered.json", second: "metric_alert_critical.json", header: sentryHeaders("event_alert"),
		secondHeader: map[string]string{headerSentryResource: "metric_alert", headerSentryRequestID: "another-request"},
		title:        "TimeoutError: payment provider did not answer within 10s"},
	{sender: "generic", first: "uptime_down.json", second: "uptime_up.json", title: "shop.example.com is down"},
}

// TestEndToEnd posts each receiver's payloads through the real router into
// Redis: a 202 means the messages are stored, a redelivery stores nothing
// new, a Redis failure is a 503 with nothing stored, and the sender's retry
// after Redis returns is stored.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range e2eCases {
		t.Run(tc.sender, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, "e2e_routes.yaml")
			first := fixture(t, tc.sender, tc.first)
			second := fixture(t, tc.sender, tc.second)
			secondHeader := tc.header
			if tc.secondHeader != nil {
				secondHeader = merge(tc.header, tc.secondHeader)
			}

			// Stored before the answer.
			resp := serve(s.h, req{sender: tc.sender, body: first, header: tc.header})
			if resp.Code != http.StatusAccepted {
				t.Fatalf("status %d: %s", resp.Code, resp.Body)
			}
			acc := requireAccepted(t, resp, countAlerts(tc.sender, tc.first))
			stored := s.tasks(t)
			if len(stored) != len(acc.Messages) || len(stored) == 0 {
				t.Fatalf("%d tasks stored, %d messages answered", len(stored), len(acc.Messages))
			}
			found := false
			for _, m := range stored {
				if m.Chat != "42" || m.IdempotencyKey == "" {
					t.Fatalf("unexpected task: %+v", m)
				}
				found = found || strings.Contains(m.Text, tc.title)
			}
			if !found {
				t.Fatalf("no stored message holds %q: %+v", tc.title, stored)
			}

			// A redelivery is a duplicate.
			resp = serve(s.h, req{sender: tc.sender, body: first, header: tc.header})
			again := requireAccepted(t, resp, acc.Alerts)
			for _, m := range again.Messages {
				if !m.Duplicate {
					t.Fatalf("redelivery stored a new task: %s", resp.Body)
				}
			}
			if n := len(s.tasks(t)); n != len(stored) {
				t.Fatalf("%d tasks after the redelivery, want %d", n, len(stored))
			}

			// Redis refuses: 503, nothing stored.
			s.mr.SetError("LOADING Redis is loading the dataset in memory")
			resp = serve(s.h, req{sender: tc.sender, body: second, header: secondHeader})
			requireError(t, resp, http.StatusServiceUnavailable, httpapi.CodeUnavailable)
			if resp.Header().Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			s.mr.SetError("")
			if n := len(s.tasks(t)); n != len(stored) {
				t.Fatalf("%d tasks after the 503, want %d", n, len(stored))
			}

			// The sender's retry is stored.
			resp = serve(s.h, req{sender: tc.sender, body: second, header: secondHeader})
			retried := requireAccepted(t, resp, countAlerts(tc.sender, tc.second))
			for _, m := range retried.Messages {
				if m.Duplicate {
					t.Fatalf("the retry was taken for a duplicate: %s", resp.Body)
				}
			}
			if n := len(s.tasks(t)); n != len(stored)+len(retried.Messages) {
				t.Fatalf("%d tasks after the retry, want %d", n, len(stored)+len(retried.Messages))
			}
		})
	}
}

// countAlerts is the number of alerts a fixture gives.
func countAlerts(sender, file string) int {
	if sender == "alertmanager" && file == "group.json" {
		return 2
	}
	return 1
}

// TestEndToEndNoRoute checks the 422 of a routing file that takes none of
// the alerts, with nothing stored.
func TestEndToEndNoRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t, "e2e_noroute.yaml")
	resp := serve(s.h, req{sender: "alertmanager", body: fixture(t, "alertmanager", "group.json")})
	requireError(t, resp, http.StatusUnprocessableEntity, httpapi.CodeNoRoute)
	if n := len(s.tasks(t)); n != 0 {
		t.Fatalf("%d tasks stored", n)
	}
	// No webhooks: section, so no generic webhook either.
	resp = serve(s.h, req{sender: "generic", body: fixture(t, "generic", "uptime_down.json")})
	requireError(t, resp, http.StatusNotFound, httpapi.CodeNotFound)
}

// TestEndToEndReload checks that a generic webhook follows the router's
// current table: gone after a swap to a file without it, back after the
// swap back.
func TestEndToEndReload(t *testing.T) {
	t.Parallel()
	s := newStack(t, "e2e_routes.yaml")
	body := fixture(t, "generic", "uptime_down.json")
	requireAccepted(t, serve(s.h, req{sender: "generic", body: body}), 1)

	without, err := alerts.LoadRoutes(filepath.Join("testdata", "e2e_noroute.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	old := s.router.Swap(without)
	requireError(t, serve(s.h, req{sender: "generic", body: body}), http.StatusNotFound, httpapi.CodeNotFound)
	s.router.Swap(old)
	requireAccepted(t, serve(s.h, req{sender: "generic", body: body}), 1)
}
