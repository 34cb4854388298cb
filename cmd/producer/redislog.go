package main

import (
	"context"
	"fmt"
	"log/slog"
)

// redisLogger routes go-redis's own log lines (connection pool retries,
// "redis: ... dial tcp ... connection refused") to slog at debug level, so
// a failure is reported once, by the command, in its own words.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if l.log != nil {
		l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
	}
}
