package oncall_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// WallTime's rule, written from the calendar: a skipped time moves forward
// by the gap, a repeated time is its first reading.
func TestWallTime(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ny := zone(t, "America/New_York")
	for _, c := range []struct {
		loc      *time.Location
		date     string
		h, m     int
		wantUTC  string
		wantWall string
	}{
		{berlin, "2026-03-29", 1, 59, "2026-03-29T00:59", "01:59 CET"},
		{berlin, "2026-03-29", 2, 0, "2026-03-29T01:00", "03:00 CEST"},  // skipped
		{berlin, "2026-03-29", 2, 30, "2026-03-29T01:30", "03:30 CEST"}, // skipped
		{berlin, "2026-03-29", 3, 0, "2026-03-29T01:00", "03:00 CEST"},
		{berlin, "2026-10-25", 2, 0, "2026-10-25T00:00", "02:00 CEST"},  // twice: first
		{berlin, "2026-10-25", 2, 30, "2026-10-25T00:30", "02:30 CEST"}, // twice: first
		{berlin, "2026-10-25", 3, 0, "2026-10-25T02:00", "03:00 CET"},
		{ny, "2026-03-08", 2, 0, "2026-03-08T07:00", "03:00 EDT"},  // skipped
		{ny, "2026-03-08", 2, 30, "2026-03-08T07:30", "03:30 EDT"}, // skipped
		{ny, "2026-11-01", 1, 0, "2026-11-01T05:00", "01:00 EDT"},  // twice: first
		{ny, "2026-11-01", 1, 30, "2026-11-01T05:30", "01:30 EDT"}, // twice: first
		{ny, "2026-11-01", 2, 0, "2026-11-01T07:00", "02:00 EST"},
		{time.UTC, "2026-03-29", 2, 30, "2026-03-29T02:30", "02:30 UTC"},
	} {
		d := local(t, time.UTC, c.date)
		got := oncall.WallTime(d.Year(), d.Month(), d.Day(), c.h, c.m, c.loc)
		if !got.Equal(utc(t, c.wantUTC)) || got.Format("15:04 MST") != c.wantWall {
			t.Errorf("WallTime(%s %02d:%02d %s) = %s (%s UTC), want %s (%s UTC)",
				c.date, c.h, c.m, c.loc, got.Format("15:04 MST"), got.UTC().Format(time.DateTime), c.wantWall, c.wantUTC)
		}
	}
}

func TestParseClock(t *testing.T) {
	for in, want := range map[string]oncall.Clock{"09:00": {9, 0}, "9:30": {9, 30}, "23:59": {23, 59}, " 00:00 ": {0, 0}} {
		if got, err := oncall.ParseClock(in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "9", "9am", "24:00", "12:60", "+1:00", "09:0", "009:00", "09:00:00"} {
		if got, err := oncall.ParseClock(in); err == nil {
			t.Errorf("ParseClock(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseLength(t *testing.T) {
	for in, want := range map[string]oncall.Length{
		"daily": oncall.Daily, "Weekly": oncall.Weekly, "every 2 days": {Days: 2}, "every 2 weeks": {Days: 14},
		"every day": oncall.Daily, "12h": {Fixed: 12 * time.Hour}, "90m": {Fixed: 90 * time.Minute},
	} {
		if got, err := oncall.ParseLength(in); err != nil || got != want {
			t.Errorf("ParseLength(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "monthly", "every 0 days", "every -1 days", "every 2 fortnights", "2d"} {
		if got, err := oncall.ParseLength(in); err == nil {
			t.Errorf("ParseLength(%q) = %v, want an error", in, got)
		}
	}
	if err := (oncall.Length{Fixed: 30 * time.Minute}).Validate(); err == nil {
		t.Error("a 30m shift is valid, want it refused as shorter than 1h")
	}
}
