// Package scenarios runs digests on Herald as users run it: the producer
// and worker binaries as processes around a real redis-server and the fake
// Bot API (test/fleet/fleettest). It holds tests only.
package scenarios
