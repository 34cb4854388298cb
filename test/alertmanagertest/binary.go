// Package alertmanagertest finds the real Alertmanager for the tests that
// drive it against Herald (the inbound formats, the Telegram front and the
// silences an Acknowledge creates), as redistest finds redis-server;
// Start runs it with a configuration and PostAlerts feeds it as
// Prometheus would (run.go). Package stack starts Herald's worker beside.
package alertmanagertest

import (
	"os"
	"os/exec"
	"testing"
)

// EnvRequire makes a missing Alertmanager a failure instead of a skip; CI
// sets it (.ci/run).
const EnvRequire = "HERALD_REQUIRE_ALERTMANAGER"

// Binary returns Debian's prometheus-alertmanager, or an alertmanager on
// PATH. Without one the test skips, unless EnvRequire is set, when it
// fails.
func Binary(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequire) != "" {
		tb.Fatal("alertmanager is not installed and " + EnvRequire + " is set: apt-get install prometheus-alertmanager")
	}
	tb.Skip("alertmanager is not installed (apt-get install prometheus-alertmanager); set " + EnvRequire + "=1 to make this test mandatory")
	return ""
}
