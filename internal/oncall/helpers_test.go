package oncall_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// The team of the tests.
var (
	alice = oncall.User{ID: 1001, Name: "Alice", Username: "alice"}
	bob   = oncall.User{ID: 1002, Name: "Bob", Username: "bob_ops"}
	carol = oncall.User{ID: 1003, Name: "Carol"}
	dana  = oncall.User{ID: 1004, Name: "Dana", Username: "dana_ops"}
	team  = []oncall.User{alice, bob, carol}
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

// utc reads an instant written by hand in UTC, "2026-03-29T07:00".
func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse("2006-01-02T15:04", s)
	if err != nil {
		t.Fatalf("bad instant %q: %v", s, err)
	}
	return v
}

// local is the date at local midnight in loc.
func local(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		t.Fatalf("bad date %q: %v", s, err)
	}
	return v
}

// weekly is a rotation of the team from Monday 2026-01-05, handing off on
// Mondays at 09:00 in loc.
func weekly(t testing.TB, loc *time.Location) oncall.Rotation {
	return oncall.Rotation{
		Name:     "weekly",
		Users:    team,
		Length:   oncall.Weekly,
		Handoff:  oncall.Clock{Hour: 9},
		Weekday:  time.Monday,
		Location: loc,
		Start:    local(t, loc, "2026-01-05"),
	}
}

// daily is a rotation of the team handing off every day at the given
// time in loc, from the given date.
func daily(t testing.TB, loc *time.Location, at oncall.Clock, from string) oncall.Rotation {
	return oncall.Rotation{
		Name:     "daily",
		Users:    team,
		Length:   oncall.Daily,
		Handoff:  at,
		Location: loc,
		Start:    local(t, loc, from),
	}
}

func name(u oncall.User, ok bool) string {
	if !ok {
		return "nobody"
	}
	return u.Name
}
