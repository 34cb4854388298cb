package heartbeat

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// utc parses a UTC time written as "2006-01-02 15:04:05".
func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

// TestScheduleNext is the deadline math: the first scheduled time strictly
// after a ping, for daily, every-5-minute and descriptor schedules, in
// several zones and across both clock changes of 2026 in Berlin (29 March
// 02:00 CET → 03:00 CEST, 25 October 03:00 CEST → 02:00 CET) and New York
// (8 March 02:00 EST → 03:00 EDT).
func TestScheduleNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr, tz string
		from, want     string // UTC
	}{
		{"daily, just before", "0 3 * * *", "", "2026-05-01 02:59:59.5", "2026-05-01 03:00:00"},
		{"daily, exactly at the time", "0 3 * * *", "UTC", "2026-05-01 03:00:00", "2026-05-02 03:00:00"},
		{"daily, after the run", "0 3 * * *", "UTC", "2026-05-01 03:04:10", "2026-05-02 03:00:00"},
		{"every 5 min", "*/5 * * * *", "UTC", "2026-05-01 10:02:30", "2026-05-01 10:05:00"},
		{"every 5 min, on the dot", "*/5 * * * *", "UTC", "2026-05-01 10:05:00", "2026-05-01 10:10:00"},
		{"every 5 min, over midnight", "*/5 * * * *", "UTC", "2026-12-31 23:58:00", "2027-01-01 00:00:00"},
		{"weekdays at 9", "0 9 * * 1-5", "UTC", "2026-05-01 09:30:00", "2026-05-04 09:00:00"}, // Fri → Mon
		{"@daily", "@daily", "UTC", "2026-05-01 12:00:00", "2026-05-02 00:00:00"},
		{"@hourly", "@hourly", "UTC", "2026-05-01 12:00:01", "2026-05-01 13:00:00"},
		{"@weekly", "@weekly", "UTC", "2026-05-01 12:00:00", "2026-05-03 00:00:00"}, // Sunday
		{"@monthly", "@monthly", "UTC", "2026-05-01 12:00:00", "2026-06-01 00:00:00"},
		{"Berlin summer", "0 3 * * *", "Europe/Berlin", "2026-05-01 00:00:00", "2026-05-01 01:00:00"},
		{"Berlin winter", "0 3 * * *", "Europe/Berlin", "2026-01-10 00:00:00", "2026-01-10 02:00:00"},
		{"Kolkata half hour", "0 9 * * *", "Asia/Kolkata", "2026-05-01 04:00:00", "2026-05-02 03:30:00"},
		{"@daily in Tokyo", "@daily", "Asia/Tokyo", "2026-05-01 16:00:00", "2026-05-02 15:00:00"},
		// Spring forward: a daily 03:00 run comes 23 hours after the last.
		{"Berlin spring, 03:00", "0 3 * * *", "Europe/Berlin", "2026-03-28 02:00:00", "2026-03-29 01:00:00"},
		// 02:30 does not exist on 29 March: the next run is the day after.
		{"Berlin spring, skipped 02:30", "30 2 * * *", "Europe/Berlin", "2026-03-28 01:30:00", "2026-03-30 00:30:00"},
		// Fall back: a daily 03:00 run comes 25 hours after the last.
		{"Berlin autumn, 03:00", "0 3 * * *", "Europe/Berlin", "2026-10-24 01:00:00", "2026-10-25 02:00:00"},
		// 02:30 happens twice on 25 October: it is expected once, the first
		// time (00:30 UTC), not again an hour later (01:30 UTC).
		{"Berlin autumn, first 02:30", "30 2 * * *", "Europe/Berlin", "2026-10-24 22:00:00", "2026-10-25 00:30:00"},
		{"Berlin autumn, repeated 02:30", "30 2 * * *", "Europe/Berlin", "2026-10-25 00:30:01", "2026-10-26 01:30:00"},
		// Every half hour: the repeated hour's times are skipped, so the
		// deadline is late rather than early.
		{"Berlin autumn, half-hourly", "*/30 * * * *", "Europe/Berlin", "2026-10-25 00:45:00", "2026-10-25 02:00:00"},
		{"Berlin autumn, hourly after", "0 * * * *", "Europe/Berlin", "2026-10-25 02:00:00", "2026-10-25 03:00:00"},
		{"New York spring, skipped 02:00", "0 2 * * *", "America/New_York", "2026-03-07 07:00:00", "2026-03-09 06:00:00"},
		{"New York spring, 06:00", "0 6 * * *", "America/New_York", "2026-03-07 11:00:00", "2026-03-08 10:00:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, err := time.Parse("2006-01-02 15:04:05.999", tc.from)
			if err != nil {
				t.Fatal(err)
			}
			sc, problems := parseSchedule(tc.expr, tc.tz, from)
			if sc == nil {
				t.Fatalf("parseSchedule(%q, %q): %v", tc.expr, tc.tz, problems)
			}
			if got, want := sc.next(from), utc(t, tc.want); !got.Equal(want) {
				t.Errorf("next(%s) = %s (%s), want %s (%s)", tc.from,
					got.Format(time.DateTime), got.In(sc.loc).Format(time.DateTime+" MST"),
					want.Format(time.DateTime), want.In(sc.loc).Format(time.DateTime+" MST"))
			}
		})
	}
}

// TestScheduleCandidates: the candidates are consecutive scheduled times.
func TestScheduleCandidates(t *testing.T) {
	t.Parallel()
	sc, problems := parseSchedule("0 3 * * *", "Europe/Berlin", time.Now())
	if sc == nil {
		t.Fatal(problems)
	}
	got := sc.candidates(utc(t, "2026-10-23 12:00:00"), 4)
	want := []string{"2026-10-24 01:00:00", "2026-10-25 02:00:00", "2026-10-26 02:00:00", "2026-10-27 02:00:00"}
	if len(got) != len(want) {
		t.Fatalf("%d candidates, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(utc(t, want[i])) {
			t.Errorf("candidate %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// TestParseScheduleRejects: each bad schedule or zone is reported on its
// field.
func TestParseScheduleRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, tz, field string }{
		{"", "", "schedule"},
		{"0 3 * *", "", "schedule"},     // four fields
		{"0 0 3 * * *", "", "schedule"}, // six fields (seconds)
		{"61 * * * *", "", "schedule"},
		{"@every 5m", "", "schedule"},
		{"@reboot", "", "schedule"},
		{"CRON_TZ=Europe/Berlin 0 3 * * *", "", "schedule"},
		{"TZ=UTC 0 3 * * *", "", "schedule"},
		{"0 0 30 2 *", "", "schedule"}, // 30 February never comes
		{strings.Repeat("1,", 70) + "1 * * * *", "", "schedule"},
		{"0 3 * * *", "Mars/Olympus", "time_zone"},
		{"0 3 * * *", "Local", "time_zone"},
		{"0 3 * * *", "../etc/passwd", "time_zone"},
	}
	for _, tc := range tests {
		sc, problems := parseSchedule(tc.expr, tc.tz, time.Now())
		if sc != nil || problems[tc.field] == "" {
			t.Errorf("parseSchedule(%q, %q) = %v, %v; want a problem with %s", tc.expr, tc.tz, sc, problems, tc.field)
		}
	}
	// Spaces are normalised; the default zone is UTC.
	sc, problems := parseSchedule("  0  3 * * * ", " ", time.Now())
	if sc == nil || sc.expr != "0 3 * * *" || sc.tz != "UTC" {
		t.Errorf("parseSchedule with spaces = %+v, %v", sc, problems)
	}
}

// TestScheduleValidation: the API rejects bad schedule settings with a 400
// naming the field, and stores nothing.
func TestScheduleValidation(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	api := newTestHandler(t, rdb, newRecorder(), nil)
	q := url.QueryEscape
	tests := []struct {
		name, method, target, ctype, body string
		field                             string
	}{
		{"interval and schedule", "PUT", "/v1/heartbeats/x?interval=1h&schedule=" + q("0 3 * * *"), "", "", "schedule"},
		{"interval and schedule in the body", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"1h","schedule":"@daily"}`, "schedule"},
		{"interval in the query, schedule in the body", "PUT", "/v1/heartbeats/x?interval=1h", "application/json", `{"schedule":"@daily"}`, "schedule"},
		{"time zone without schedule", "PUT", "/v1/heartbeats/x?interval=1h&time_zone=UTC", "", "", "time_zone"},
		{"unknown time zone", "PUT", "/v1/heartbeats/x", "application/json", `{"schedule":"0 3 * * *","time_zone":"Europe/Atlantis"}`, "time_zone"},
		{"not cron", "PUT", "/v1/heartbeats/x?schedule=daily", "", "", "schedule"},
		{"six fields", "PUT", "/v1/heartbeats/x?schedule=" + q("0 0 3 * * *"), "", "", "schedule"},
		{"@every", "PUT", "/v1/heartbeats/x?schedule=" + q("@every 1h"), "", "", "schedule"},
		{"never fires", "PUT", "/v1/heartbeats/x?schedule=" + q("0 0 31 2 *"), "", "", "schedule"},
		{"schedule as a number", "PUT", "/v1/heartbeats/x", "application/json", `{"schedule":5}`, "schedule"},
		{"bad max run time", "PUT", "/v1/heartbeats/x?interval=1h&max_run_time=soon", "", "", "max_run_time"},
		{"negative max run time", "PUT", "/v1/heartbeats/x?interval=1h&max_run_time=-1m", "", "", "max_run_time"},
		{"first signal without either", "PUT", "/v1/heartbeats/x?grace=1h", "", "", "interval"},
		{"start without either", "POST", "/v1/heartbeats/x/start", "", "", "interval"},
		{"fail without either", "POST", "/v1/heartbeats/x/fail", "text/plain", "boom", "interval"},
		{"start with a bad schedule", "POST", "/v1/heartbeats/x/start?schedule=" + q("0 25 * * *"), "", "", "schedule"},
		{"fail with an unknown parameter", "POST", "/v1/heartbeats/x/fail?interval=1h&reason=disk", "", "", "reason"},
		{"start with labels in the body is not a setting", "POST", "/v1/heartbeats/x/start?labels=a", "", "", "labels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(api, tc.method, tc.target, tc.ctype, tc.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", w.Code, w.Body)
			}
			eb := errorBody(t, w)
			found := false
			for _, f := range eb.Error.Fields {
				if f.Field == tc.field {
					found = true
				}
			}
			if !found {
				t.Errorf("error %+v does not name the field %q", eb.Error, tc.field)
			}
		})
	}
	if n := rdb.HLen(t.Context(), keys.HeartbeatRecords()).Val(); n != 0 {
		t.Errorf("%d heartbeats stored by rejected requests", n)
	}
	// A method the signal routes do not take.
	if w := do(api, http.MethodGet, "/v1/heartbeats/x/fail", "", ""); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "PUT, POST" {
		t.Errorf("GET /fail: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// TestScheduledDeadlines pings scheduled heartbeats at fixed times (a fake
// clock) and checks the deadline each ping sets: the schedule's next time
// after the ping plus the grace, by default 10% of the gap to the time
// after.
func TestScheduledDeadlines(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	clock := newFakeClock(time.Now())
	api := newTestHandler(t, srv.Client(t), newRecorder(), func(c *Config) {
		withClock(clock)(c)
		c.MinDefaultGrace = fallbackMinGrace
	})
	q := url.QueryEscape
	tests := []struct {
		name, query, ping     string
		deadline, grace       string
		defaultGrace          bool
		schedule, zone, inter string
	}{
		{"daily, default grace", "schedule=" + q("0 3 * * *"), "2026-05-01 03:02:00", "2026-05-02 05:24:00", "2h24m0s", true, "0 3 * * *", "UTC", ""},
		{"daily in Berlin, 1h grace", "schedule=" + q("0 3 * * *") + "&time_zone=Europe/Berlin&grace=1h", "2026-05-01 01:02:00", "2026-05-02 02:00:00", "1h0m0s", false, "0 3 * * *", "Europe/Berlin", ""},
		{"every 5 min, default grace at least 30s", "schedule=" + q("*/5 * * * *"), "2026-05-01 10:01:00", "2026-05-01 10:05:30", "30s", true, "*/5 * * * *", "UTC", ""},
		{"@hourly, 5m grace", "schedule=@hourly&grace=5m", "2026-05-01 10:00:01", "2026-05-01 11:05:00", "5m0s", false, "@hourly", "UTC", ""},
		// Pinged the evening before the spring change: the next 03:00 is
		// 23 h away in real time.
		{"Berlin across spring change", "schedule=" + q("0 3 * * *") + "&time_zone=Europe/Berlin&grace=30m", "2026-03-28 20:00:00", "2026-03-29 01:30:00", "30m0s", false, "0 3 * * *", "Europe/Berlin", ""},
		{"Berlin across autumn change", "schedule=" + q("30 2 * * *") + "&time_zone=Europe/Berlin&grace=10m", "2026-10-25 00:31:00", "2026-10-26 01:40:00", "10m0s", false, "30 2 * * *", "Europe/Berlin", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "sched-" + itoa(int64(i))
			clock.Set(utc(t, tc.ping))
			hb := send(t, api, name, "", tc.query, "", http.StatusCreated)
			if want := utc(t, tc.deadline); !hb.Deadline.Equal(want) {
				t.Errorf("deadline %s, want %s", hb.Deadline.Format(time.DateTime), tc.deadline)
			}
			if hb.Grace != tc.grace || hb.GraceDefault != tc.defaultGrace || hb.Schedule != tc.schedule || hb.TimeZone != tc.zone || hb.Interval != tc.inter {
				t.Errorf("heartbeat %+v", hb)
			}
			// A bare ping later keeps the schedule and moves the deadline
			// to the next time after it.
			clock.Set(hb.Deadline.Add(-time.Second))
			again := send(t, api, name, "", "", "", http.StatusOK)
			if again.Schedule != tc.schedule || !again.Deadline.After(hb.Deadline) {
				t.Errorf("second ping: %+v (first deadline %s)", again, hb.Deadline)
			}
		})
	}
}

// TestSwitchIntervalAndSchedule: declaring a schedule replaces the interval
// and the other way round.
func TestSwitchIntervalAndSchedule(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	clock := newFakeClock(utc(t, "2026-05-01 12:00:00"))
	api := newTestHandler(t, srv.Client(t), newRecorder(), withClock(clock))
	hb := send(t, api, "job", "", "interval=1h&grace=1m", "", http.StatusCreated)
	if hb.Interval != "1h0m0s" || hb.Schedule != "" {
		t.Fatalf("interval heartbeat: %+v", hb)
	}
	hb = send(t, api, "job", "", "schedule=@daily&time_zone=Asia/Tokyo", "", http.StatusOK)
	if hb.Interval != "" || hb.Schedule != "@daily" || hb.TimeZone != "Asia/Tokyo" || !hb.Deadline.Equal(utc(t, "2026-05-01 15:01:00")) {
		t.Fatalf("after declaring a schedule: %+v", hb)
	}
	hb = send(t, api, "job", "", "interval=2h", "", http.StatusOK)
	if hb.Interval != "2h0m0s" || hb.Schedule != "" || hb.TimeZone != "" || !hb.Deadline.Equal(utc(t, "2026-05-01 14:01:00")) {
		t.Fatalf("after declaring an interval again: %+v", hb)
	}
}
