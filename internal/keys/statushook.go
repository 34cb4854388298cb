package keys

import (
	"crypto/sha256"
	"encoding/hex"
)

// The status callbacks' keys (internal/statushook) are fleet-wide: every
// worker may deliver any event to any endpoint, so they carry the {herald}
// tag, under "{herald}:hook:".

// HookWakeList holds the wake-up tokens of the status callbacks' queue:
// the callback deliverers wait on it instead of WakeList, so that an
// emitted event never takes the token a Telegram worker waits for, nor a
// message the one a deliverer waits for.
func HookWakeList() string { return prefix + "hook:wake" }

// HookEndpoint is the health record of one callback endpoint
// (scheme://host[:port]/path, the form statushook signs for): a hash with
// the endpoint, when its current run of failures began and its last error,
// or when and why it was disabled. The endpoint is hashed (SHA-256, hex)
// into the name, as URLs may be long and hold any character.
func HookEndpoint(endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return prefix + "hook:ep:" + hex.EncodeToString(sum[:16])
}
