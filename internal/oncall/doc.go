// Package oncall computes who is on call: schedules of rotations, layered,
// with overrides, in a time zone, across daylight saving changes. It holds
// no state and talks to nothing. Its subpackage internal/oncall/roster
// keeps the state (overrides made through the API, handoff announcements,
// the on-call API and /oncall); the routing file and escalations build
// on both.
//
// # The model
//
// A Rotation (a layer) is an ordered list of Users taking turns, one Shift
// each. Its Length is a number of calendar days (daily, weekly, every N
// days or weeks) or a fixed duration (12h). Shifts change at Handoff, a
// wall-clock time in the rotation's Location, on every day or, for
// weekly lengths, on Weekday. Start anchors the rotation: the first shift
// begins at the first handoff at or after Start and goes to Users[0], the
// next to Users[1], and so on round. A layer may end (End); before its
// first handoff and from its end on it has nobody on call.
//
// A Schedule stacks layers from the bottom up. At any instant the top-most
// layer that has someone on call decides; a layer with nobody (not begun,
// ended) lets the ones below show through, so a partial layer (holiday
// cover, say) sits on a full base rotation. Overrides sit above every
// layer: User X from Start to End. Where two overrides overlap, the one
// made later (later in Schedule.Overrides) wins.
//
// # Questions
//
// Schedule.OnCall says who is on call at an instant and their Shift, the
// whole span of absolute time they are on call without a break, however
// many layers and overrides it is made of. Schedule.Next is the shift
// after it: the next time the person on call changes. Schedule.Handoffs
// lists every change of person in a span of time, for the handoff
// messages; a shift passing to the same person is no handoff. Shifts are
// looked for no further than Horizon away; an end beyond it is left zero.
//
// # Time zones and daylight saving
//
// Calendar lengths follow the wall clock: a daily rotation handing off at
// 09:00 Europe/Berlin hands off at 09:00 local time every day, so the
// shift across the spring change (2026-03-29) lasts 23 hours and the one
// across the autumn change (2026-10-25) 25 hours; a weekly one lasts 167
// or 169 hours those weeks.
//
// Fixed lengths are absolute time and do not follow the clocks: a 12h
// rotation from 09:00 and 21:00 CET hands off at 10:00 and 22:00 CEST
// after the spring change. Only its first handoff is placed on the wall
// clock.
//
// A handoff time the clocks skip or show twice is placed by WallTime,
// whose rule is RFC 5545's: a skipped time is read with the offset before
// the gap (02:30 on 2026-03-29 in Berlin is 03:30 CEST, 01:30 UTC) and a
// repeated time is its first occurrence (02:30 on 2026-10-25 in Berlin is
// 02:30 CEST, 00:30 UTC). time.Date gives the first answer in zones east
// of Greenwich only, and picks either reading of a repeated time, so
// WallTime corrects it.
//
// # Files
//
//   - user.go: User, a Telegram user;
//   - clock.go: Clock, a handoff time, and WallTime, the daylight saving rule;
//   - length.go: Length, a shift's length;
//   - rotation.go: Rotation, a layer, and which shift holds an instant;
//   - override.go: Override;
//   - schedule.go: Schedule, OnCall and Next, and how layers and overrides
//     combine;
//   - shift.go, handoff.go: Shift, Handoff and Handoffs;
//   - parse.go, parse_layer.go, parse_value.go: Parse and Read, schedules
//     from YAML through internal/yamlstrict, every mistake reported as
//     file:line:column with its fix.
package oncall
