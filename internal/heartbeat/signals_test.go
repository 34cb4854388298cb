package heartbeat

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
)

// TestFailAlertsOnceAndPingResolves: /fail raises the heartbeat's alert at
// once (dispatched by the request, with the body as its detail), exactly
// once however many checkers run and however often the job reports the
// failure; the next success ping resolves it.
func TestFailAlertsOnceAndPingResolves(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 03:00:00"))
	h := newHarness(t, harnessOpts{checkers: 2, tweak: func(c *Config) {
		withClock(clock)(c)
		c.MaxFailDetail = 64
	}})
	first := send(t, h.handler, "backup", "", "schedule="+url.QueryEscape("0 3 * * *")+"&grace=1h", "", http.StatusCreated)

	clock.Set(utc(t, "2026-05-02 03:00:00"))
	send(t, h.handler, "backup", "start", "", "", http.StatusOK)
	clock.Advance(95 * time.Second)
	body := "pg_dump: error: connection\x00 refused\r\n\x1b[31mexit 1\x1b[0m\n" + strings.Repeat("x", 100)
	hb := send(t, h.handler, "backup", "fail", "", body, http.StatusOK)
	if hb.State != "down" || hb.DownReason != "fail" || hb.LastRun != "1m35s" || hb.Started != nil {
		t.Errorf("after /fail: %+v", hb)
	}
	// The request dispatched the alert before it answered.
	select {
	case a := <-h.rec.ch:
		if a.Title != "Heartbeat backup failed" || a.Status != alerts.StatusFiring || a.Severity != alerts.SeverityCritical {
			t.Errorf("fail alert = %+v", a)
		}
		if want := "heartbeat/backup/down/" + itoa(first.LastPing.UnixNano()); a.Fingerprint != want {
			t.Errorf("fingerprint %q, want %q", a.Fingerprint, want)
		}
		if !a.Time.Equal(clock.Now()) {
			t.Errorf("alert time %v, want the failure's %v", a.Time, clock.Now())
		}
		// Control characters are gone, the line end is kept, the body is
		// cut at 64 bytes and marked so.
		wantDetail := "pg_dump: error: connection  refused\n [31mexit 1 [0m\n" + strings.Repeat("x", 11) + " …"
		if !strings.HasSuffix(a.Body, "\n\n"+wantDetail) {
			t.Errorf("alert body %q does not end with the detail %q", a.Body, wantDetail)
		}
		if !strings.Contains(a.Body, "Run time: 1m35s.") {
			t.Errorf("alert body %q lacks the run time", a.Body)
		}
	default:
		t.Fatal("the /fail request answered before dispatching the alert")
	}

	// Reported again, and checked by both checkers: still one alert.
	send(t, h.handler, "backup", "fail", "", "again", http.StatusOK)
	clock.Advance(48 * time.Hour) // far past the schedule's deadline
	h.checks.waitRounds(t, 3)
	if got := h.rec.alerts(); len(got) != 1 {
		t.Fatalf("%d alerts after two /fail and checks, want 1: %+v", len(got), got)
	}

	hb = send(t, h.handler, "backup", "", "", "", http.StatusOK)
	if hb.State != "up" || hb.DownReason != "" || hb.DownSince != nil {
		t.Errorf("after the success ping: %+v", hb)
	}
	up := h.rec.next(t)
	if up.Status != alerts.StatusResolved || up.Title != "Heartbeat backup is back" ||
		up.Fingerprint != "heartbeat/backup/up/"+itoa(first.LastPing.UnixNano()) {
		t.Errorf("recovery = %+v", up)
	}
	if !strings.Contains(up.Body, "after the failure reported at 2026-05-02 03:01:35 UTC") {
		t.Errorf("recovery body %q", up.Body)
	}
	h.checks.waitRounds(t, 3)
	if got := h.rec.alerts(); len(got) != 2 {
		t.Errorf("%d alerts, want the failure and one recovery: %+v", len(got), got)
	}
}

// TestFailCreatesHeartbeat: a job whose very first signal is a /fail
// (declaring its settings in the query string) is alerted on, and its
// first success ping resolves it.
func TestFailCreatesHeartbeat(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 03:00:00"))
	h := newHarness(t, harnessOpts{checkers: 1, tweak: withClock(clock)})
	hb := send(t, h.handler, "etl", "fail", "interval=1h", "", http.StatusCreated)
	if hb.State != "down" || !hb.LastPing.IsZero() {
		t.Fatalf("created by /fail: %+v", hb)
	}
	down := h.rec.next(t)
	if down.Title != "Heartbeat etl failed" || !strings.Contains(down.Body, "No success ping since the heartbeat was created") {
		t.Errorf("alert = %+v", down)
	}
	clock.Advance(time.Minute)
	send(t, h.handler, "etl", "", "", "", http.StatusOK)
	up := h.rec.next(t)
	if up.Status != alerts.StatusResolved || strings.Replace(up.Fingerprint, "/up/", "/down/", 1) != down.Fingerprint {
		t.Errorf("recovery %+v does not pair with %q", up, down.Fingerprint)
	}
}

// TestStartRecordsRunTime: /start then a success ping records the run's
// duration, in the ping's answer and in GET; a ping without a /start
// leaves the last run alone.
func TestStartRecordsRunTime(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 02:59:58"))
	h := newHarness(t, harnessOpts{tweak: withClock(clock)})
	send(t, h.handler, "report", "", "schedule="+url.QueryEscape("0 3 * * *")+"&time_zone=Europe/Berlin&grace=30m", "", http.StatusCreated)

	clock.Set(utc(t, "2026-05-02 01:00:00"))
	hb := send(t, h.handler, "report", "start", "", "", http.StatusOK)
	if hb.Started == nil || !hb.Started.Equal(clock.Now()) || hb.State != "up" {
		t.Fatalf("after /start: %+v", hb)
	}
	// Without max_run_time the run must end within the grace.
	if want := clock.Now().Add(30 * time.Minute); !hb.Deadline.Equal(want) {
		t.Errorf("deadline during the run %s, want %s", hb.Deadline, want)
	}
	clock.Advance(12*time.Minute + 3500*time.Millisecond)
	hb = send(t, h.handler, "report", "", "", "", http.StatusOK)
	if hb.LastRun != "12m3.5s" || hb.Started != nil {
		t.Errorf("ping answer: last_run %q, started %v", hb.LastRun, hb.Started)
	}
	// The deadline is the schedule's again: 03:00 Berlin tomorrow + grace.
	if want := utc(t, "2026-05-03 01:30:00"); !hb.Deadline.Equal(want) {
		t.Errorf("deadline after the run %s, want %s", hb.Deadline, want)
	}
	if got := getHeartbeat(t, h, "report"); got.LastRun != "12m3.5s" || got.Started != nil {
		t.Errorf("GET: %+v", got)
	}
	clock.Advance(time.Hour)
	if hb = send(t, h.handler, "report", "", "", "", http.StatusOK); hb.LastRun != "12m3.5s" {
		t.Errorf("a ping without /start changed last_run to %q", hb.LastRun)
	}
	if n := len(h.rec.alerts()); n != 0 {
		t.Errorf("%d alerts for runs that finished in time", n)
	}
}

// TestRunTimeout: a run started with /start that sends neither success nor
// failure within max_run_time is overdue (one alert, saying so), and the
// success ping that finally comes resolves it with the run time.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 03:00:00"))
	h := newHarness(t, harnessOpts{checkers: 2, tweak: withClock(clock)})
	send(t, h.handler, "import", "", "schedule=@daily&grace=2h&max_run_time=10m", "", http.StatusCreated)
	clock.Set(utc(t, "2026-05-02 00:00:05"))
	hb := send(t, h.handler, "import", "start", "", "", http.StatusOK)
	if hb.MaxRunTime != "10m0s" || !hb.Deadline.Equal(clock.Now().Add(10*time.Minute)) {
		t.Fatalf("after /start: %+v", hb)
	}
	clock.Advance(9 * time.Minute)
	h.checks.waitRounds(t, 2)
	if n := len(h.rec.alerts()); n != 0 {
		t.Fatalf("%d alerts within the run's limit", n)
	}
	clock.Advance(time.Minute + time.Second)
	down := h.rec.next(t)
	h.checks.waitRounds(t, 3)
	if got := h.rec.alerts(); len(got) != 1 {
		t.Fatalf("%d alerts from 2 checkers, want 1: %+v", len(got), got)
	}
	if down.Title != "Heartbeat import is overdue: its run has not finished" ||
		!strings.Contains(down.Body, "A run started at 2026-05-02 00:00:05 UTC and has not finished after 10m0s") {
		t.Errorf("run timeout alert = %+v", down)
	}
	if got := getHeartbeat(t, h, "import"); got.State != "down" || got.DownReason != "run_timeout" || got.Started == nil {
		t.Errorf("GET after the timeout: %+v", got)
	}
	clock.Advance(20 * time.Minute)
	send(t, h.handler, "import", "", "", "", http.StatusOK)
	up := h.rec.next(t)
	if up.Status != alerts.StatusResolved || !strings.Contains(up.Body, "Run time: 30m1s.") {
		t.Errorf("recovery = %+v", up)
	}
}

// TestRunLimits: a run announced in time may take max_run_time even past
// the schedule's deadline; a run announced after the deadline is overdue
// already.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 03:00:30"))
	h := newHarness(t, harnessOpts{checkers: 2, tweak: withClock(clock)})
	q := "schedule=" + url.QueryEscape("0 3 * * *") + "&grace=10m&max_run_time=2h"
	send(t, h.handler, "long", "", q, "", http.StatusCreated)
	send(t, h.handler, "late", "", q, "", http.StatusCreated)

	clock.Set(utc(t, "2026-05-02 03:00:00"))
	if hb := send(t, h.handler, "long", "start", "", "", http.StatusOK); !hb.Deadline.Equal(utc(t, "2026-05-02 05:00:00")) {
		t.Errorf("deadline of a run started in time: %s, want the start + 2h", hb.Deadline)
	}
	clock.Set(utc(t, "2026-05-02 04:59:00"))
	h.checks.waitRounds(t, 2)
	// Only "late", which never started, is overdue (at 03:10).
	if got := h.rec.alerts(); len(got) != 1 || got[0].Labels["heartbeat"] != "late" {
		t.Fatalf("alerts %+v, want only the one of late", got)
	}
	if hb := send(t, h.handler, "long", "", "", "", http.StatusOK); hb.LastRun != "1h59m0s" || hb.State != "up" {
		t.Errorf("after the long run: %+v", hb)
	}
	// A /start after the deadline does not make up for the lateness.
	hb := send(t, h.handler, "late", "start", "", "", http.StatusOK)
	if hb.State != "down" || hb.DownReason != "overdue" {
		t.Errorf("late /start: %+v", hb)
	}
}

// TestStartWhileDown: a /start does not end an outage; the success ping
// does, with the run time in the recovery.
func TestStartWhileDown(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-05-01 03:00:00"))
	h := newHarness(t, harnessOpts{checkers: 1, tweak: withClock(clock)})
	send(t, h.handler, "sync", "", "interval=1h&grace=0s", "", http.StatusCreated)
	clock.Advance(2 * time.Hour)
	h.checks.waitRounds(t, 2)
	if got := getHeartbeat(t, h, "sync"); got.State != "down" || got.DownReason != "overdue" {
		t.Fatalf("not down: %+v", got)
	}
	hb := send(t, h.handler, "sync", "start", "", "", http.StatusOK)
	if hb.State != "down" || hb.Started == nil {
		t.Errorf("/start while down: %+v", hb)
	}
	clock.Advance(42 * time.Second)
	send(t, h.handler, "sync", "", "", "", http.StatusOK)
	var up alerts.Alert
	for _, a := range h.rec.alerts() {
		if a.Status == alerts.StatusResolved {
			up = a
		}
	}
	if !strings.Contains(up.Body, "Run time: 42s.") || len(h.rec.alerts()) != 2 {
		t.Errorf("alerts %+v, want the outage and a recovery with the run time", h.rec.alerts())
	}
}

func TestSanitizeDetail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"  plain text  ", 100, "plain text"},
		{"a\r\nb\rc\td", 100, "a\nb c\td"},
		{"bell\a nul\x00 esc\x1b", 100, "bell  nul  esc"},
		{"bad \xff utf8", 100, "bad \uFFFD utf8"},
		{"héllo", 2, "h …"},       // the limit cuts é in half: it is dropped
		{"héllo", 3, "hé …"},      // é fits
		{"exactly", 7, "exactly"}, // not cut
		{"", 10, ""},
		{"line\u2028sep", 100, "line sep"},
	}
	for _, tc := range tests {
		if got := sanitizeDetail([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("sanitizeDetail(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}
