package config

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
)

// Log environment variables shared by both binaries.
const (
	EnvLogLevel  = "LOG_LEVEL"
	EnvLogFormat = "LOG_FORMAT"
)

// Log output formats accepted by LOG_FORMAT.
const (
	LogFormatAuto = "auto" // text on a terminal, JSON otherwise
	logFormatJSON = "json"
	logFormatText = "text"
)

// Log controls structured logging.
type Log struct {
	// Level is the minimum level logged (LOG_LEVEL: debug, info, warn or
	// error; default info).
	Level slog.Level
	// Format is json, text or auto (LOG_FORMAT, default auto: text when
	// writing to a terminal, JSON otherwise).
	Format string
}

// NewLogger builds a logger writing to w in the configured format and level.
// With the auto format, w counts as a terminal when it is an *os.File backed
// by a character device.
func (l Log) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.Level}
	text := false
	switch strings.ToLower(l.Format) {
	case logFormatText:
		text = true
	case logFormatJSON:
	default:
		text = isTerminal(w)
	}
	if text {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// isTerminal reports whether w is a file that refers to a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// WithDefaults fills an empty format; the zero Level is already info.
func (l Log) WithDefaults() Log {
	if l.Format == "" {
		l.Format = LogFormatAuto
	}
	return l
}

// Validate records an unknown format.
func (l Log) Validate(p *Problems) {
	switch l.Format {
	case LogFormatAuto, logFormatJSON, logFormatText:
	default:
		p.Add(EnvLogFormat, "must be json, text or auto, got %q", l.Format)
	}
}

// parseLevel reads debug, info, warn (or warning) and error, case-insensitive,
// with an optional offset such as "debug-4" as slog allows.
func parseLevel(s string) (slog.Level, error) {
	if strings.EqualFold(s, "warning") {
		s = "warn"
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(s)); err != nil {
		return 0, errors.New("must be debug, info, warn or error")
	}
	return lv, nil
}

// parseFormat reads json, text or auto, case-insensitive.
func parseFormat(s string) (string, error) {
	f := strings.ToLower(s)
	switch f {
	case LogFormatAuto, logFormatJSON, logFormatText:
		return f, nil
	}
	return "", errors.New("must be json, text or auto")
}
