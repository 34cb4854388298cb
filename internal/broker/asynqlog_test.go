package broker

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestAsynqLoggerJanitorWarn: asynq's start-up warning about Herald's own
// janitor batch size is logged at Debug, not as a WARN; other warnings, and
// the same warning for another batch size, stay WARNs.
func TestAsynqLoggerJanitorWarn(t *testing.T) {
	var buf bytes.Buffer
	l := asynqLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	// As asynq v0.26's server.go words it (logger.Warnf → Warn(Sprintf)).
	l.Warn("Janitor batch size of 1000 is greater than the recommended batch size of 100. This might cause a long-running script")
	if buf.Len() != 0 {
		t.Errorf("janitor batch warning logged at Info level or above: %s", buf.String())
	}
	l.Warn("Janitor batch size of 5000 is greater than the recommended batch size of 100. This might cause a long-running script")
	l.Warn("some other warning")
	if got := strings.Count(buf.String(), "level=WARN"); got != 2 {
		t.Errorf("want 2 WARN lines, got %d: %s", got, buf.String())
	}
}
