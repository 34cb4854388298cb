// Package app wires configuration into running components for the binaries:
// cmd/producer, cmd/worker and the all-in-one local mode. It holds no logic of
// its own beyond assembly and lifecycle.
package app
