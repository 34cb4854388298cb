package heartbeat

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
)

// TestMissedCronHeartbeatAlertsOnce runs three checkers, as three producer
// replicas would, on one Redis with a fake clock, for a nightly job at
// 03:00 Berlin time with 30 minutes of grace, pinged on the evening before
// the spring clock change: nothing is raised until 03:30 CEST (01:30 UTC,
// 23 hours after the last 03:00 run), then exactly one alert.
func TestMissedCronHeartbeatAlertsOnce(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(utc(t, "2026-03-28 02:05:00")) // 03:05 CET, the night's run has just pinged
	h := newHarness(t, harnessOpts{checkers: 3, tweak: withClock(clock)})
	query := "schedule=" + url.QueryEscape("0 3 * * *") + "&time_zone=Europe/Berlin&grace=30m"
	hb := send(t, h.handler, "nightly", "", query, "", http.StatusCreated)
	deadline := utc(t, "2026-03-29 01:30:00")
	if !hb.Deadline.Equal(deadline) {
		t.Fatalf("deadline %s, want %s (03:00 CEST + 30m)", hb.Deadline, deadline)
	}

	// One second before the deadline: every checker runs, nothing is due.
	clock.Set(deadline.Add(-time.Second))
	h.checks.waitRounds(t, 3)
	if got := h.rec.alerts(); len(got) != 0 {
		t.Fatalf("%d alerts before the deadline: %+v", len(got), got)
	}
	if got := getHeartbeat(t, h, "nightly"); got.State != "up" {
		t.Fatalf("before the deadline: %+v", got)
	}

	// Just past it: one alert, whatever the number of checkers and checks.
	clock.Set(deadline.Add(time.Second))
	a := h.rec.next(t)
	h.checks.waitRounds(t, 3)
	clock.Advance(6 * time.Hour)
	h.checks.waitRounds(t, 3)
	if got := h.rec.alerts(); len(got) != 1 {
		t.Fatalf("%d alerts from 3 checkers, want exactly 1: %+v", len(got), got)
	}
	if a.Title != "Heartbeat nightly is overdue" || a.Status != alerts.StatusFiring || !a.Time.Equal(deadline) ||
		a.Fingerprint != "heartbeat/nightly/down/"+itoa(hb.LastPing.UnixNano()) {
		t.Errorf("alert = %+v", a)
	}
	// Times are shown in the schedule's zone.
	for _, want := range []string{`expected on the schedule "0 3 * * *" in Europe/Berlin, grace 30m0s`,
		"No ping since 2026-03-28 03:05:00 CET", "Overdue since 2026-03-29 03:30:00 CEST"} {
		if !strings.Contains(a.Body, want) {
			t.Errorf("alert body %q lacks %q", a.Body, want)
		}
	}
	if got := getHeartbeat(t, h, "nightly"); got.State != "down" || got.DownReason != "overdue" {
		t.Errorf("after the alert: %+v", got)
	}

	// The late run pings: one recovery, and the next deadline is the
	// following night's.
	back := send(t, h.handler, "nightly", "", "", "", http.StatusOK)
	if want := utc(t, "2026-03-30 01:30:00"); !back.Deadline.Equal(want) {
		t.Errorf("deadline after the recovery %s, want %s", back.Deadline, want)
	}
	up := h.rec.next(t)
	h.checks.waitRounds(t, 3)
	if up.Status != alerts.StatusResolved || len(h.rec.alerts()) != 2 {
		t.Errorf("recovery %+v; %d alerts in all, want 2", up, len(h.rec.alerts()))
	}
}

// TestScheduledRunsOnTimeNeverAlert replays a month of a job that runs at
// 02:30 Berlin time (a time that the spring change skips and the autumn
// change repeats) and pings ten minutes later, around both clock changes:
// no alert, because each deadline is the next run's.
func TestScheduledRunsOnTimeNeverAlert(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// firstAt is the first instant of day whose Berlin wall clock reads
	// 02:30, or false when the spring change skips that reading.
	firstAt := func(day time.Time) (time.Time, bool) {
		t := time.Date(day.Year(), day.Month(), day.Day(), 2, 30, 0, 0, berlin)
		if t.Hour() != 2 || t.Minute() != 30 {
			return time.Time{}, false
		}
		if earlier := t.Add(-time.Hour); earlier.Hour() == 2 && earlier.Minute() == 30 {
			t = earlier // the autumn change repeats 02:30: cron runs at the first
		}
		return t, true
	}
	for _, start := range []string{"2026-03-25", "2026-10-21"} {
		day, _ := time.ParseInLocation(time.DateOnly, start, berlin)
		clock := newFakeClock(day)
		h := newHarness(t, harnessOpts{checkers: 2, tweak: withClock(clock)})
		query := "schedule=" + url.QueryEscape("30 2 * * *") + "&time_zone=Europe/Berlin&grace=15m"
		created := false
		for i := range 8 {
			at, ok := firstAt(day.AddDate(0, 0, i))
			if !ok {
				continue // cron skips the run
			}
			// The job pings ten minutes after it started.
			run := at.Add(10 * time.Minute)
			clock.Set(run)
			h.checks.waitRounds(t, 2)
			want := http.StatusOK
			if !created {
				want = http.StatusCreated
			}
			hb := send(t, h.handler, "job", "", query, "", want)
			created = true
			if hb.State != "up" {
				t.Fatalf("%s: %+v", run, hb)
			}
		}
		if got := h.rec.alerts(); len(got) != 0 {
			t.Errorf("from %s: %d alerts for a job that ran on time: %+v", start, len(got), got)
		}
	}
}
