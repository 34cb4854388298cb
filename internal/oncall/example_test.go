package oncall_test

import (
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// A team of three takes turns a week at a time, handing off on Mondays at
// 09:00 Berlin time; Dana covers Carol's weekend across the spring change.
func ExampleSchedule_OnCall() {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	s := oncall.Schedule{
		Name: "primary",
		Layers: []oncall.Rotation{{
			Users: []oncall.User{
				{ID: 1001, Name: "Alice", Username: "alice"},
				{ID: 1002, Name: "Bob"},
				{ID: 1003, Name: "Carol"},
			},
			Length:   oncall.Weekly,
			Handoff:  oncall.Clock{Hour: 9},
			Weekday:  time.Monday,
			Location: berlin,
			Start:    time.Date(2026, time.January, 5, 0, 0, 0, 0, berlin),
		}},
		Overrides: []oncall.Override{{
			User:  oncall.User{ID: 1004, Name: "Dana"},
			Start: time.Date(2026, time.March, 28, 12, 0, 0, 0, berlin),
			End:   time.Date(2026, time.March, 29, 12, 0, 0, 0, berlin),
		}},
	}
	const layout = "Mon 2006-01-02 15:04 MST"
	now := time.Date(2026, time.March, 25, 12, 0, 0, 0, berlin)
	u, shift, _ := s.OnCall(now)
	fmt.Printf("on call: %s until %s\n", u, shift.End.In(berlin).Format(layout))
	next, shift, _ := s.Next(now)
	fmt.Printf("next: %s from %s\n", next, shift.Start.In(berlin).Format(layout))
	for _, h := range s.Handoffs(now, now.Add(14*24*time.Hour)) {
		fmt.Printf("%s: %s -> %s\n", h.At.In(berlin).Format(layout), h.From.Name, h.To.Name)
	}
	// Output:
	// on call: Carol until Sat 2026-03-28 12:00 CET
	// next: Dana from Sat 2026-03-28 12:00 CET
	// Sat 2026-03-28 12:00 CET: Carol -> Dana
	// Sun 2026-03-29 12:00 CEST: Dana -> Carol
	// Mon 2026-03-30 09:00 CEST: Carol -> Alice
	// Mon 2026-04-06 09:00 CEST: Alice -> Bob
}
