package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// TestCronHeartbeatAndFailSignal runs two producer processes (each with
// its own heartbeat checker) and three workers, in real time: a heartbeat
// on the schedule "every minute" with 2 s of grace that misses its run
// gives exactly one overdue alert fleet-wide; a job that reports /fail to
// both producers gives exactly one failure alert at once, with its detail.
func TestCronHeartbeatAndFailSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Timeout: 3 * time.Minute,
		Fake: telegramfake.Config{TimeScale: 1}})
	bases := producers(t, s, 2)

	// The first ping sets the schedule; the next run is due at the next
	// minute, 2 s of grace after it.
	if code, body := call(t, s.Fleet, http.MethodPut, bases[0]+"/v1/heartbeats/minutely?schedule=*+*+*+*+*&time_zone=UTC&grace=2s", nil, nil); code != http.StatusCreated {
		t.Fatalf("first ping: %d %s", code, body)
	}
	pinged := time.Now()
	due := pinged.Truncate(time.Minute).Add(time.Minute + 2*time.Second)

	// A failure report, sent to both producers (a job retrying its report).
	start := time.Now()
	for _, base := range bases {
		if code, body := call(t, s.Fleet, http.MethodPut, base+"/v1/heartbeats/etl/fail?schedule=0+3+*+*+*&time_zone=Europe/Berlin", []byte("exit status 3: disk full"), map[string]string{"Content-Type": "text/plain"}); code >= 300 {
			t.Fatalf("/fail: %d %s", code, body)
		}
	}
	waitFor(t, s.Ctx, "the failure alert", func() bool { return countContaining(textsTo(s.Fake, alertsChat), "Heartbeat etl failed") > 0 })
	failedIn := time.Since(start)

	waitFor(t, s.Ctx, "the overdue alert", func() bool {
		return countContaining(textsTo(s.Fake, alertsChat), "Heartbeat minutely is overdue") > 0
	})
	overdueAt := time.Now()
	// Give every checker a few rounds to send a second one, if it would.
	time.Sleep(2 * time.Second)
	texts := textsTo(s.Fake, alertsChat)
	if n := countContaining(texts, "Heartbeat etl failed"); n != 1 {
		t.Errorf("%d failure alerts, want 1:\n%s", n, strings.Join(texts, "\n---\n"))
	}
	if n := countContaining(texts, "disk full"); n != 1 {
		t.Errorf("the failure's detail shows in %d messages, want 1", n)
	}
	if n := countContaining(texts, "Heartbeat minutely is overdue"); n != 1 {
		t.Errorf("%d overdue alerts, want 1:\n%s", n, strings.Join(texts, "\n---\n"))
	}
	if overdueAt.Before(due) {
		t.Errorf("overdue alert at %v, before the run's deadline %v", overdueAt, due)
	}
	t.Logf("failure alert %v after /fail; overdue alert %v after the deadline", failedIn.Round(time.Millisecond), overdueAt.Sub(due).Round(time.Millisecond))
}
