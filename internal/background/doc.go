// Package background is the lifecycle of Herald's background loops: a
// Group starts a component's goroutines once and stops them (cancel, then
// wait), and Every runs a pass at jittered intervals until its context
// ends. The escalation engine and the handoff announcer, the heartbeat
// checker, the silences' releaser, the updates poller and the webhook
// registrar, the status-hook deliverer and the broker's sweepers use it,
// so that Start-twice, Shutdown-before-Start and wait-for-the-pass-under-
// way behave alike everywhere.
package background
