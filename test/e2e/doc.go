// Package e2e holds Herald's end-to-end tests: producer and worker binaries
// as separate processes, a real redis-server and the fake Telegram Bot API at
// Telegram's limits (scaled in time), driven as a user would drive them.
package e2e
