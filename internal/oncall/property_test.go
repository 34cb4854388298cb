package oncall_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// schedules are the schedules the properties are checked on: each kind of
// length, in both zones, with layers and overlapping overrides.
func schedules(t *testing.T) map[string]oncall.Schedule {
	berlin := zone(t, "Europe/Berlin")
	ny := zone(t, "America/New_York")
	fixed := daily(t, berlin, oncall.Clock{Hour: 9}, "2026-01-01")
	fixed.Length = oncall.Length{Fixed: 12 * time.Hour}
	every2 := daily(t, ny, oncall.Clock{Hour: 2, Minute: 30}, "2026-01-01")
	every2.Length = oncall.Length{Days: 2}
	// A top layer of one person over a long weekend around each change.
	cover := func(loc *time.Location, from, to string) oncall.Rotation {
		r := daily(t, loc, oncall.Clock{Hour: 18}, from)
		r.Users, r.End = []oncall.User{dana}, local(t, loc, to)
		return r
	}
	return map[string]oncall.Schedule{
		"weekly Berlin": {Layers: []oncall.Rotation{weekly(t, berlin)}},
		"weekly New York with overrides": {
			Layers: []oncall.Rotation{weekly(t, ny)},
			Overrides: []oncall.Override{
				{User: dana, Start: time.Date(2026, 3, 7, 12, 0, 0, 0, ny), End: time.Date(2026, 3, 9, 12, 0, 0, 0, ny)},
				{User: bob, Start: time.Date(2026, 3, 8, 1, 0, 0, 0, ny), End: time.Date(2026, 3, 8, 4, 0, 0, 0, ny)},
				{User: alice, Start: time.Date(2026, 10, 31, 22, 0, 0, 0, ny), End: time.Date(2026, 11, 1, 3, 0, 0, 0, ny)},
			},
		},
		"daily Berlin 02:30":          {Layers: []oncall.Rotation{daily(t, berlin, oncall.Clock{Hour: 2, Minute: 30}, "2026-01-01")}},
		"every 2 days New York 02:30": {Layers: []oncall.Rotation{every2}},
		"12h Berlin":                  {Layers: []oncall.Rotation{fixed}},
		"weekly Berlin with cover": {Layers: []oncall.Rotation{
			weekly(t, berlin), cover(berlin, "2026-03-27", "2026-03-30"), cover(berlin, "2026-10-23", "2026-10-26"),
		}},
		"daily New York with cover": {Layers: []oncall.Rotation{
			daily(t, ny, oncall.Clock{Hour: 9}, "2026-01-01"), cover(ny, "2026-03-06", "2026-03-09"), cover(ny, "2026-10-30", "2026-11-02"),
		}},
	}
}

// windows are a few days around each daylight saving change of 2026.
var windows = [][2]string{
	{"2026-03-05T00:00", "2026-03-11T00:00"}, // New York, spring
	{"2026-03-26T00:00", "2026-04-01T00:00"}, // Berlin, spring
	{"2026-10-22T00:00", "2026-10-28T00:00"}, // Berlin, autumn
	{"2026-10-29T00:00", "2026-11-04T00:00"}, // New York, autumn
}

// Whoever OnCall names at t is on call at every instant of the shift it
// returns, and not just before it starts or at its end.
func TestPropertyShiftIsConstant(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(30, 2026))
	for label, s := range schedules(t) {
		for _, w := range windows {
			from, to := utc(t, w[0]), utc(t, w[1])
			for range 200 {
				at := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)))))
				u, sh, ok := s.OnCall(at)
				if !ok {
					continue
				}
				if !sh.Contains(at) || sh.Start.IsZero() || sh.End.IsZero() {
					t.Fatalf("%s: OnCall(%s) = %s with shift %v, which does not hold it", label, at, u.Name, sh)
				}
				for range 20 {
					in := sh.Start.Add(time.Duration(rng.Int64N(int64(sh.Duration()))))
					if v, _, ok := s.OnCall(in); !ok || v.ID != u.ID {
						t.Fatalf("%s: %s is on call %s to %s, but OnCall(%s) = %s", label, u.Name, sh.Start, sh.End, in, name(v, ok))
					}
				}
				for _, edge := range []time.Time{sh.Start.Add(-time.Nanosecond), sh.End} {
					if v, _, ok := s.OnCall(edge); ok && v.ID == u.ID {
						t.Fatalf("%s: %s's shift %v is not the whole of it: also on call at %s", label, u.Name, sh, edge)
					}
				}
			}
		}
	}
}

// Handoffs between two instants are the changes seen by asking OnCall
// every minute (every handoff of these schedules is on a whole minute).
func TestPropertyHandoffsAgreeWithOnCall(t *testing.T) {
	t.Parallel()
	for label, s := range schedules(t) {
		for _, w := range windows {
			from, to := utc(t, w[0]), utc(t, w[1])
			var want []oncall.Handoff
			prev, _, _ := s.OnCall(from.Add(-time.Minute))
			for at := from; at.Before(to); at = at.Add(time.Minute) {
				u, _, _ := s.OnCall(at)
				if u.ID != prev.ID {
					want = append(want, oncall.Handoff{At: at, From: prev, To: u})
				}
				prev = u
			}
			got := s.Handoffs(from, to)
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d handoffs, sampling finds %d:\n got %v\nwant %v", label, w[0], len(got), len(want), got, want)
			}
			for i := range got {
				g, w := got[i], want[i]
				if !g.At.Equal(w.At) || g.From.ID != w.From.ID || g.To.ID != w.To.ID {
					t.Errorf("%s: handoff %d = %s %s -> %s, sampling finds %s %s -> %s", label, i, g.At, g.From.Name, g.To.Name, w.At, w.From.Name, w.To.Name)
				}
				if !g.To.IsZero() {
					if u, sh, _ := s.OnCall(g.At); u.ID != g.To.ID || !sh.Start.Equal(g.At) || sh != g.Shift {
						t.Errorf("%s: handoff %d to %s has shift %v, OnCall says %s %v", label, i, g.To.Name, g.Shift, u.Name, sh)
					}
				}
			}
		}
	}
}

// Next at t is the shift that starts where the one at t ends.
func TestPropertyNextFollowsOnCall(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 3))
	for label, s := range schedules(t) {
		for _, w := range windows {
			from, to := utc(t, w[0]), utc(t, w[1])
			for range 100 {
				at := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)))))
				u, sh, ok := s.OnCall(at)
				nu, nsh, nok := s.Next(at)
				if !nok || !nsh.Start.After(at) {
					t.Fatalf("%s: Next(%s) = %s %v, %v", label, at, nu.Name, nsh, nok)
				}
				if ok && (!nsh.Start.Equal(sh.End) || nu.ID == u.ID) {
					t.Fatalf("%s: at %s %s is on call until %s, but Next = %s from %s", label, at, u.Name, sh.End, nu.Name, nsh.Start)
				}
				if v, vsh, _ := s.OnCall(nsh.Start); v.ID != nu.ID || vsh != nsh {
					t.Fatalf("%s: Next(%s) = %s %v, OnCall at its start = %s %v", label, at, nu.Name, nsh, v.Name, vsh)
				}
			}
		}
	}
}
