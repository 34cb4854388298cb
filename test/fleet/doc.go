// Package fleet starts Herald as a user runs it — producer and worker
// binaries as separate processes around one redis-server — for end-to-end
// tests and the burst benchmark. It builds the binaries, starts and signals
// processes, waits for readiness and reads what they used.
package fleet
