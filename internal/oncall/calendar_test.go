package oncall_test

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// The daylight saving changes of 2026 these tests are written against,
// taken from the calendar and the law rather than from Go's zone data:
//
//   - Europe/Berlin: summer time begins on the last Sunday of March and ends
//     on the last Sunday of October, both at 01:00 UTC (EU Directive
//     2000/84/EC, article 2 and 3; summary at
//     https://oeil.secure.europarl.europa.eu/oeil/en/document-summary?id=142).
//     In 2026 that is Sunday 2026-03-29, 02:00 CET -> 03:00 CEST, and Sunday
//     2026-10-25, 03:00 CEST -> 02:00 CET (The Local Germany, "When do the
//     clocks change in Germany this spring?": "In 2026, that falls on March
//     29th ... the last Sunday in October. In 2026, that falls on October
//     25th"). Check: the directive's formula, Sunday (31 - (5y/4 + 4) mod 7)
//     March and (31 - (5y/4 + 1) mod 7) October, gives 29 and 25 for 2026.
//   - America/New_York: daylight time begins on the second Sunday of March
//     and ends on the first Sunday of November at 02:00 local time (Energy
//     Policy Act of 2005). In 2026: Sunday 2026-03-08, 02:00 EST -> 03:00
//     EDT, and Sunday 2026-11-01, 02:00 EDT -> 01:00 EST (FOX 5 New York,
//     https://www.fox5ny.com/news/what-know-about-daylight-saving-time:
//     "Daylight saving time begins Sunday, March 8, 2026 ... will end
//     Sunday, Nov. 1, 2026").
//
// Offsets: CET = UTC+1, CEST = UTC+2, EST = UTC-5, EDT = UTC-4. So 09:00
// CET is 08:00 UTC, 09:00 CEST 07:00 UTC, 09:00 EST 14:00 UTC and 09:00 EDT
// 13:00 UTC.
//
// Weekly rotations start on Monday 2026-01-05 (2026-01-01 is a Thursday)
// with Alice, Bob, Carol: week k from then is team[k mod 3]. Counted by
// hand: Monday 2026-03-02 is week 8 (Carol), 03-09 week 9 (Alice), 03-23
// week 11 (Carol), 03-30 week 12 (Alice), 10-19 week 41 (Carol; 287 days
// after 01-05), 10-26 week 42 (Alice), 11-02 week 43 (Bob).

// change is one expected handoff: at the UTC instant, from one person to
// the next.
type change struct {
	at       string // UTC, by hand
	from, to string
}

func TestCalendarWeeklyBerlin(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	s := oncall.Schedule{Name: "primary", Layers: []oncall.Rotation{weekly(t, berlin)}}
	checkHandoffs(t, s, utc(t, "2026-03-16T00:00"), utc(t, "2026-04-07T00:00"), []change{
		{"2026-03-16T08:00", "Alice", "Bob"},   // Mon 09:00 CET
		{"2026-03-23T08:00", "Bob", "Carol"},   // Mon 09:00 CET
		{"2026-03-30T07:00", "Carol", "Alice"}, // Mon 09:00 CEST: Carol's week was 167 h
		{"2026-04-06T07:00", "Alice", "Bob"},   // Mon 09:00 CEST
	})
	checkHandoffs(t, s, utc(t, "2026-10-19T00:00"), utc(t, "2026-11-03T00:00"), []change{
		{"2026-10-19T07:00", "Bob", "Carol"},   // Mon 09:00 CEST
		{"2026-10-26T08:00", "Carol", "Alice"}, // Mon 09:00 CET: Carol's week was 169 h
		{"2026-11-02T08:00", "Alice", "Bob"},
	})
	checkShift(t, s, utc(t, "2026-03-29T01:30"), "Carol", "2026-03-23T08:00", "2026-03-30T07:00", 167*time.Hour)
	checkShift(t, s, utc(t, "2026-10-25T01:30"), "Carol", "2026-10-19T07:00", "2026-10-26T08:00", 169*time.Hour)
}

func TestCalendarWeeklyNewYork(t *testing.T) {
	ny := zone(t, "America/New_York")
	s := oncall.Schedule{Name: "primary", Layers: []oncall.Rotation{weekly(t, ny)}}
	checkHandoffs(t, s, utc(t, "2026-03-02T00:00"), utc(t, "2026-03-17T00:00"), []change{
		{"2026-03-02T14:00", "Bob", "Carol"},   // Mon 09:00 EST
		{"2026-03-09T13:00", "Carol", "Alice"}, // Mon 09:00 EDT
		{"2026-03-16T13:00", "Alice", "Bob"},
	})
	checkHandoffs(t, s, utc(t, "2026-10-26T00:00"), utc(t, "2026-11-10T00:00"), []change{
		{"2026-10-26T13:00", "Carol", "Alice"}, // Mon 09:00 EDT
		{"2026-11-02T14:00", "Alice", "Bob"},   // Mon 09:00 EST
		{"2026-11-09T14:00", "Bob", "Carol"},
	})
	checkShift(t, s, utc(t, "2026-03-08T12:00"), "Carol", "2026-03-02T14:00", "2026-03-09T13:00", 167*time.Hour)
	checkShift(t, s, utc(t, "2026-11-01T12:00"), "Alice", "2026-10-26T13:00", "2026-11-02T14:00", 169*time.Hour)
}

func TestCalendarDailyAcrossChanges(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ny := zone(t, "America/New_York")
	// Alice from Friday 2026-03-27 09:00 CET, then Bob, Carol, Alice...
	s := oncall.Schedule{Layers: []oncall.Rotation{daily(t, berlin, oncall.Clock{Hour: 9}, "2026-03-27")}}
	checkHandoffs(t, s, utc(t, "2026-03-27T00:00"), utc(t, "2026-03-31T00:00"), []change{
		{"2026-03-27T08:00", "nobody", "Alice"}, // Fri 09:00 CET, the first shift
		{"2026-03-28T08:00", "Alice", "Bob"},    // Sat 09:00 CET
		{"2026-03-29T07:00", "Bob", "Carol"},    // Sun 09:00 CEST: Bob's day was 23 h
		{"2026-03-30T07:00", "Carol", "Alice"},
	})
	checkShift(t, s, utc(t, "2026-03-29T00:59"), "Bob", "2026-03-28T08:00", "2026-03-29T07:00", 23*time.Hour)
	// From Friday 2026-10-23: Alice, Bob on Saturday, Carol on Sunday 10-25.
	s = oncall.Schedule{Layers: []oncall.Rotation{daily(t, berlin, oncall.Clock{Hour: 9}, "2026-10-23")}}
	checkShift(t, s, utc(t, "2026-10-25T01:30"), "Bob", "2026-10-24T07:00", "2026-10-25T08:00", 25*time.Hour)
	// New York from Saturday 2026-10-31: Alice, then Bob on Sunday 11-01.
	s = oncall.Schedule{Layers: []oncall.Rotation{daily(t, ny, oncall.Clock{Hour: 9}, "2026-10-31")}}
	checkHandoffs(t, s, utc(t, "2026-10-31T00:00"), utc(t, "2026-11-03T00:00"), []change{
		{"2026-10-31T13:00", "nobody", "Alice"}, // Sat 09:00 EDT
		{"2026-11-01T14:00", "Alice", "Bob"},    // Sun 09:00 EST: Alice's day was 25 h
		{"2026-11-02T14:00", "Bob", "Carol"},
	})
}

// A handoff time the clocks skip or show twice follows WallTime's rule:
// skipped, it is read with the offset before the gap (an hour later on the
// clock); shown twice, the first time counts.
func TestCalendarSkippedAndRepeatedHandoff(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ny := zone(t, "America/New_York")
	s := oncall.Schedule{Layers: []oncall.Rotation{daily(t, berlin, oncall.Clock{Hour: 2, Minute: 30}, "2026-03-28")}}
	checkHandoffs(t, s, utc(t, "2026-03-28T00:00"), utc(t, "2026-03-31T00:00"), []change{
		{"2026-03-28T01:30", "nobody", "Alice"}, // 02:30 CET
		{"2026-03-29T01:30", "Alice", "Bob"},    // 02:30 does not exist: 03:30 CEST
		{"2026-03-30T00:30", "Bob", "Carol"},    // 02:30 CEST
	})
	s = oncall.Schedule{Layers: []oncall.Rotation{daily(t, berlin, oncall.Clock{Hour: 2, Minute: 30}, "2026-10-24")}}
	checkHandoffs(t, s, utc(t, "2026-10-24T00:00"), utc(t, "2026-10-27T00:00"), []change{
		{"2026-10-24T00:30", "nobody", "Alice"}, // 02:30 CEST
		{"2026-10-25T00:30", "Alice", "Bob"},    // 02:30 twice: the first, CEST
		{"2026-10-26T01:30", "Bob", "Carol"},    // 02:30 CET: Bob's day was 25 h
	})
	s = oncall.Schedule{Layers: []oncall.Rotation{daily(t, ny, oncall.Clock{Hour: 2, Minute: 30}, "2026-03-07")}}
	checkHandoffs(t, s, utc(t, "2026-03-07T00:00"), utc(t, "2026-03-10T00:00"), []change{
		{"2026-03-07T07:30", "nobody", "Alice"}, // 02:30 EST
		{"2026-03-08T07:30", "Alice", "Bob"},    // 02:30 does not exist: 03:30 EDT (time.Date says 01:30 EST)
		{"2026-03-09T06:30", "Bob", "Carol"},    // 02:30 EDT
	})
	s = oncall.Schedule{Layers: []oncall.Rotation{daily(t, ny, oncall.Clock{Hour: 1, Minute: 30}, "2026-10-31")}}
	checkHandoffs(t, s, utc(t, "2026-10-31T00:00"), utc(t, "2026-11-03T00:00"), []change{
		{"2026-10-31T05:30", "nobody", "Alice"}, // 01:30 EDT
		{"2026-11-01T05:30", "Alice", "Bob"},    // 01:30 twice: the first, EDT
		{"2026-11-02T06:30", "Bob", "Carol"},    // 01:30 EST
	})
}

// A fixed length is absolute time: 12-hour shifts from 09:00 CET keep
// their UTC instants and so move to 10:00 and 22:00 local after the change.
func TestCalendarFixedLengthIgnoresDST(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	r := daily(t, berlin, oncall.Clock{Hour: 9}, "2026-03-28")
	r.Length = oncall.Length{Fixed: 12 * time.Hour}
	s := oncall.Schedule{Layers: []oncall.Rotation{r}}
	checkHandoffs(t, s, utc(t, "2026-03-28T00:00"), utc(t, "2026-03-30T09:00"), []change{
		{"2026-03-28T08:00", "nobody", "Alice"}, // Sat 09:00 CET
		{"2026-03-28T20:00", "Alice", "Bob"},    // 21:00 CET
		{"2026-03-29T08:00", "Bob", "Carol"},    // 10:00 CEST: not 09:00
		{"2026-03-29T20:00", "Carol", "Alice"},  // 22:00 CEST
		{"2026-03-30T08:00", "Alice", "Bob"},
	})
}

// An override across the spring change in Berlin: Dana takes over from
// Saturday 2026-03-28 12:00 CET (11:00 UTC) to Monday 2026-03-30 12:00 CEST
// (10:00 UTC), over Carol's week and the Monday handoff to Alice at 09:00
// CEST (07:00 UTC), which therefore is no handoff.
func TestCalendarOverrideAcrossChange(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	s := oncall.Schedule{
		Layers: []oncall.Rotation{weekly(t, berlin)},
		Overrides: []oncall.Override{{
			User:  dana,
			Start: time.Date(2026, time.March, 28, 12, 0, 0, 0, berlin),
			End:   time.Date(2026, time.March, 30, 12, 0, 0, 0, berlin),
		}},
	}
	checkHandoffs(t, s, utc(t, "2026-03-23T00:00"), utc(t, "2026-04-01T00:00"), []change{
		{"2026-03-23T08:00", "Bob", "Carol"},
		{"2026-03-28T11:00", "Carol", "Dana"},
		{"2026-03-30T10:00", "Dana", "Alice"},
	})
	for _, c := range []struct{ at, who string }{
		{"2026-03-28T10:59", "Carol"},
		{"2026-03-28T11:00", "Dana"},
		{"2026-03-29T01:00", "Dana"}, // the clocks jump
		{"2026-03-30T07:00", "Dana"}, // Alice's week begins under the override
		{"2026-03-30T09:59", "Dana"},
		{"2026-03-30T10:00", "Alice"},
	} {
		u, _, ok := s.OnCall(utc(t, c.at))
		if got := name(u, ok); got != c.who {
			t.Errorf("OnCall(%s UTC) = %s, want %s", c.at, got, c.who)
		}
	}
	checkShift(t, s, utc(t, "2026-03-29T12:00"), "Dana", "2026-03-28T11:00", "2026-03-30T10:00", 47*time.Hour)
	checkShift(t, s, utc(t, "2026-03-31T12:00"), "Alice", "2026-03-30T10:00", "2026-04-06T07:00", 165*time.Hour)
	// And Next from Carol's Saturday morning is Dana's override.
	u, sh, ok := s.Next(utc(t, "2026-03-28T09:00"))
	if name(u, ok) != "Dana" || !sh.Start.Equal(utc(t, "2026-03-28T11:00")) || !sh.End.Equal(utc(t, "2026-03-30T10:00")) {
		t.Errorf("Next = %s %v, want Dana from 2026-03-28T11:00 to 2026-03-30T10:00 UTC", name(u, ok), sh)
	}
}

// An override across the autumn change in New York: Dana from Saturday
// 2026-10-31 18:00 EDT (22:00 UTC) to Sunday 2026-11-01 18:00 EST (23:00
// UTC), 25 hours, inside Alice's week (week 42).
func TestCalendarOverrideAcrossChangeNewYork(t *testing.T) {
	ny := zone(t, "America/New_York")
	s := oncall.Schedule{
		Layers: []oncall.Rotation{weekly(t, ny)},
		Overrides: []oncall.Override{{
			User:  dana,
			Start: time.Date(2026, time.October, 31, 18, 0, 0, 0, ny),
			End:   time.Date(2026, time.November, 1, 18, 0, 0, 0, ny),
		}},
	}
	checkHandoffs(t, s, utc(t, "2026-10-26T00:00"), utc(t, "2026-11-03T00:00"), []change{
		{"2026-10-26T13:00", "Carol", "Alice"},
		{"2026-10-31T22:00", "Alice", "Dana"},
		{"2026-11-01T23:00", "Dana", "Alice"},
		{"2026-11-02T14:00", "Alice", "Bob"},
	})
	checkShift(t, s, utc(t, "2026-11-01T06:00"), "Dana", "2026-10-31T22:00", "2026-11-01T23:00", 25*time.Hour)
}

// checkHandoffs compares s.Handoffs(from, to) with the expected changes.
func checkHandoffs(t *testing.T, s oncall.Schedule, from, to time.Time, want []change) {
	t.Helper()
	got := s.Handoffs(from, to)
	if len(got) != len(want) {
		t.Errorf("Handoffs(%s, %s): got %d, want %d: %v", from, to, len(got), len(want), got)
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		gf, gt := name(g.From, !g.From.IsZero()), name(g.To, !g.To.IsZero())
		if !g.At.Equal(utc(t, w.at)) || gf != w.from || gt != w.to {
			t.Errorf("handoff %d: got %s %s -> %s, want %s UTC %s -> %s", i, g.At.UTC().Format(time.DateTime), gf, gt, w.at, w.from, w.to)
		}
	}
}

// checkShift checks who is on call at t and their shift.
func checkShift(t *testing.T, s oncall.Schedule, at time.Time, who, start, end string, length time.Duration) {
	t.Helper()
	u, sh, ok := s.OnCall(at)
	if got := name(u, ok); got != who {
		t.Errorf("OnCall(%s) = %s, want %s", at.UTC(), got, who)
		return
	}
	if !sh.Start.Equal(utc(t, start)) || !sh.End.Equal(utc(t, end)) {
		t.Errorf("OnCall(%s) shift = %s to %s UTC, want %s to %s", at.UTC(), sh.Start.UTC(), sh.End.UTC(), start, end)
	}
	if sh.Duration() != length {
		t.Errorf("OnCall(%s) shift lasts %s, want %s", at.UTC(), sh.Duration(), length)
	}
}
