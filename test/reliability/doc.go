// Package reliability holds Herald's end-to-end crash, fault and bad-input
// scenarios: real redis-server and worker processes, the fake Bot API with
// Telegram's limits, and a figure for every run. The package has no code of
// its own outside its tests; see docs/RELIABILITY.md for the measured table
// and the command that reproduces each row.
package reliability
