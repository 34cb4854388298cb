package alerts

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v (is tzdata installed?)", name, err)
	}
	return loc
}

// quietRoute parses a one-route file with the given quiet_hours value and
// returns the route's window.
func quietRoute(t *testing.T, quiet string) *quietHours {
	t.Helper()
	tbl := mustParse(t, "routes:\n  - name: r\n    default: true\n    destinations: [\"1\"]\n    quiet_hours: "+quiet+"\n")
	if tbl.fallback.quiet == nil {
		t.Fatal("route has no quiet hours")
	}
	return tbl.fallback.quiet
}

// TestQuietHoursWindow walks the window math across midnight, the days a
// window opens on, the end of the day, and Berlin's and New York's
// daylight saving changes.
func TestQuietHoursWindow(t *testing.T) {
	t.Parallel()
	berlin, nyc := mustZone(t, "Europe/Berlin"), mustZone(t, "America/New_York")
	at := func(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 0, 0, loc)
	}
	night := `{start: "22:00", end: "07:00", time_zone: Europe/Berlin}`
	weeknights := `{start: "22:00", end: "07:00", time_zone: Europe/Berlin, days: [mon-thu, sun]}`
	cases := []struct {
		name, quiet string
		now         time.Time
		held        bool
		until       time.Time
	}{
		{"before the window", night, at(berlin, 2026, 6, 10, 21, 59), false, time.Time{}},
		{"opening instant", night, at(berlin, 2026, 6, 10, 22, 0), true, at(berlin, 2026, 6, 11, 7, 0)},
		{"before midnight", night, at(berlin, 2026, 6, 10, 23, 30), true, at(berlin, 2026, 6, 11, 7, 0)},
		{"after midnight", night, at(berlin, 2026, 6, 11, 3, 0), true, at(berlin, 2026, 6, 11, 7, 0)},
		{"closing instant is outside", night, at(berlin, 2026, 6, 11, 7, 0), false, time.Time{}},
		{"midday", night, at(berlin, 2026, 6, 11, 12, 0), false, time.Time{}},
		{"now given in UTC", night, time.Date(2026, 6, 10, 20, 30, 0, 0, time.UTC), true, at(berlin, 2026, 6, 11, 7, 0)},
		// Spring forward (29 March 2026, 02:00 -> 03:00): the night lasts 8 hours.
		{"spring forward, before the jump", night, at(berlin, 2026, 3, 29, 1, 30), true, at(berlin, 2026, 3, 29, 7, 0)},
		{"spring forward, after the jump", night, at(berlin, 2026, 3, 29, 3, 30), true, at(berlin, 2026, 3, 29, 7, 0)},
		// Fall back (25 October 2026, 03:00 -> 02:00): the night lasts 10 hours.
		{"fall back, first 02:30", night, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), true, at(berlin, 2026, 10, 25, 7, 0)},
		{"fall back, second 02:30", night, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), true, at(berlin, 2026, 10, 25, 7, 0)},
		{"fall back, 06:59 local", night, at(berlin, 2026, 10, 25, 6, 59), true, at(berlin, 2026, 10, 25, 7, 0)},
		// A window opening at a time the clocks skip opens at the time after the gap.
		{"opening in the gap", `{start: "02:30", end: "05:00", time_zone: Europe/Berlin}`, at(berlin, 2026, 3, 29, 3, 15), false, time.Time{}},
		{"opening in the gap, after it", `{start: "02:30", end: "05:00", time_zone: Europe/Berlin}`, at(berlin, 2026, 3, 29, 3, 30), true, at(berlin, 2026, 3, 29, 5, 0)},
		// West of Greenwich too: 02:30 on 2026-03-08 in New York does not
		// exist (02:00 EST becomes 03:00 EDT); the window opens at 03:30 EDT
		// (07:30 UTC), not at 01:30 EST as time.Date reads it.
		{"opening in the gap in New York, before it", `{start: "02:30", end: "05:00", time_zone: America/New_York}`, time.Date(2026, 3, 8, 6, 45, 0, 0, time.UTC), false, time.Time{}},
		{"opening in the gap in New York, time.Date's reading", `{start: "02:30", end: "05:00", time_zone: America/New_York}`, time.Date(2026, 3, 8, 6, 30, 0, 0, time.UTC), false, time.Time{}},
		{"opening in the gap in New York, after it", `{start: "02:30", end: "05:00", time_zone: America/New_York}`, time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC), true, at(nyc, 2026, 3, 8, 5, 0)},
		// A window closing at a time the clocks show twice closes at the first.
		{"closing at a repeated time in New York", `{start: "00:00", end: "01:30", time_zone: America/New_York}`, time.Date(2026, 11, 1, 5, 15, 0, 0, time.UTC), true, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
		{"closing at a repeated time in New York, second reading is outside", `{start: "00:00", end: "01:30", time_zone: America/New_York}`, time.Date(2026, 11, 1, 6, 15, 0, 0, time.UTC), false, time.Time{}},
		// days name the day a window opens: Thursday night runs into Friday,
		// Friday and Saturday nights are not quiet, Sunday night is.
		{"thursday night", weeknights, at(berlin, 2026, 6, 11, 23, 0), true, at(berlin, 2026, 6, 12, 7, 0)},
		{"friday morning, opened thursday", weeknights, at(berlin, 2026, 6, 12, 6, 0), true, at(berlin, 2026, 6, 12, 7, 0)},
		{"friday night", weeknights, at(berlin, 2026, 6, 12, 23, 0), false, time.Time{}},
		{"saturday morning", weeknights, at(berlin, 2026, 6, 13, 6, 0), false, time.Time{}},
		{"sunday night", weeknights, at(berlin, 2026, 6, 14, 23, 0), true, at(berlin, 2026, 6, 15, 7, 0)},
		{"a range across the week's end", `{start: "22:00", end: "07:00", days: fri-mon}`, time.Date(2026, 6, 14, 23, 0, 0, 0, time.UTC), true,
			time.Date(2026, 6, 15, 7, 0, 0, 0, time.UTC)},
		{"a range across the week's end, tuesday", `{start: "22:00", end: "07:00", days: fri-mon}`, time.Date(2026, 6, 16, 23, 0, 0, 0, time.UTC), false, time.Time{}},
		// Without time_zone the clock is UTC.
		{"UTC by default", `{start: "09:00", end: "17:00"}`, time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC), true, time.Date(2026, 6, 10, 17, 0, 0, 0, time.UTC)},
		{"whole day", `{start: "00:00", end: "24:00", time_zone: America/New_York}`, at(nyc, 2026, 11, 1, 23, 59), true, at(nyc, 2026, 11, 2, 0, 0)},
		{"whole day, fall back day lasts 25h", `{start: "00:00", end: "24:00", time_zone: America/New_York}`, at(nyc, 2026, 11, 1, 0, 0), true, at(nyc, 2026, 11, 2, 0, 0)},
		{"daytime window in New York", `{start: "09:00", end: "17:30", time_zone: America/New_York, days: [sat, sunday]}`, at(nyc, 2026, 3, 8, 17, 29), true, at(nyc, 2026, 3, 8, 17, 30)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := quietRoute(t, c.quiet)
			until, held := q.until(c.now)
			if held != c.held || !until.Equal(c.until) {
				t.Fatalf("until(%s) = %s, %v; want %s, %v", c.now, until, held, c.until, c.held)
			}
		})
	}
	// The spring night is an hour shorter, the autumn night an hour longer.
	q := quietRoute(t, night)
	if u, _ := q.until(at(berlin, 2026, 3, 28, 22, 0)); u.Sub(at(berlin, 2026, 3, 28, 22, 0)) != 8*time.Hour {
		t.Errorf("spring night lasts %v, want 8h", u.Sub(at(berlin, 2026, 3, 28, 22, 0)))
	}
	if u, _ := q.until(at(berlin, 2026, 10, 24, 22, 0)); u.Sub(at(berlin, 2026, 10, 24, 22, 0)) != 10*time.Hour {
		t.Errorf("autumn night lasts %v, want 10h", u.Sub(at(berlin, 2026, 10, 24, 22, 0)))
	}
}

// TestQuietHoursParseErrors: each mistake is reported at its setting with a
// fix.
func TestQuietHoursParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ quiet, want string }{
		{`{start: "22:00"}`, `routes[0].quiet_hours.end: is missing`},
		{`{end: "07:00"}`, `routes[0].quiet_hours.start: is missing`},
		{`{start: "25:00", end: "07:00"}`, `routes[0].quiet_hours.start: "25:00" is not a time of day`},
		{`{start: "22:00", end: "7"}`, `routes[0].quiet_hours.end: "7" is not a time of day`},
		{`{start: "24:00", end: "07:00"}`, `routes[0].quiet_hours.start: "24:00" is not a time of day`},
		{`{start: "07:00", end: "07:00"}`, `routes[0].quiet_hours.end: equals start`},
		{`{start: "22:00", end: "07:00", time_zone: Mars/Olympus}`, `routes[0].quiet_hours.time_zone: unknown time zone "Mars/Olympus"`},
		{`{start: "22:00", end: "07:00", time_zone: Local}`, `routes[0].quiet_hours.time_zone: "Local" is not a time zone name`},
		{`{start: "22:00", end: "07:00", days: []}`, `routes[0].quiet_hours.days: is empty`},
		{`{start: "22:00", end: "07:00", days: [mon, funday]}`, `routes[0].quiet_hours.days: "funday" is not a day of the week`},
		{`{start: "22:00", end: "07:00", timezone: UTC}`, `routes[0].quiet_hours.timezone: unknown key; did you mean "time_zone"?`},
		{`"22:00-07:00"`, `routes[0].quiet_hours: got`},
	}
	for _, c := range cases {
		src := "routes:\n  - name: r\n    default: true\n    destinations: [\"1\"]\n    quiet_hours: " + c.quiet + "\n"
		_, err := ParseRoutes("routes.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("quiet_hours: %s\n got %v\nwant %q", c.quiet, err, c.want)
		}
	}
}

func TestParseClock(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"00:00": 0, "7:05": 425, "07:05": 425, "23:59": 1439} {
		if got, ok := parseClock(s, false); !ok || got != want {
			t.Errorf("parseClock(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	if got, ok := parseClock("24:00", true); !ok || got != minutesPerDay {
		t.Errorf("parseClock(24:00, end) = %d, %v", got, ok)
	}
	for _, s := range []string{"", "7", "07:5", "07:60", "-1:00", "+1:00", "24:01", "24:00", "ab:cd", "07:00:00", "1:+5"} {
		if _, ok := parseClock(s, false); ok {
			t.Errorf("parseClock(%q) accepted", s)
		}
	}
}
