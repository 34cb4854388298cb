package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"debug", slog.LevelDebug, true},
		{"INFO", slog.LevelInfo, true},
		{"warn", slog.LevelWarn, true},
		{"Warning", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"debug-4", slog.LevelDebug - 4, true},
		{"verbose", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, err := parseLevel(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseLevel(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestNewLoggerFormat(t *testing.T) {
	t.Parallel()
	regular, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()

	handlerOf := func(l *slog.Logger) string {
		switch l.Handler().(type) {
		case *slog.JSONHandler:
			return "json"
		case *slog.TextHandler:
			return "text"
		}
		return "other"
	}
	tests := []struct {
		format string
		w      any
		want   string
	}{
		{"auto", &bytes.Buffer{}, "json"},
		{"auto", regular, "json"},
		{"auto", devNull, "text"}, // a character device, like a terminal
		{"", devNull, "text"},
		{"json", devNull, "json"},
		{"text", &bytes.Buffer{}, "text"},
		{"TEXT", regular, "text"},
	}
	for _, tc := range tests {
		var l *slog.Logger
		switch w := tc.w.(type) {
		case *bytes.Buffer:
			l = Log{Format: tc.format}.NewLogger(w)
		case *os.File:
			l = Log{Format: tc.format}.NewLogger(w)
		}
		if got := handlerOf(l); got != tc.want {
			t.Errorf("format %q on %T: handler %s, want %s", tc.format, tc.w, got, tc.want)
		}
	}
}

func TestNewLoggerLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := Log{Level: slog.LevelWarn, Format: "json"}.NewLogger(&buf)
	l.Info("hidden")
	l.Warn("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, `"msg":"shown"`) {
		t.Fatalf("unexpected output %q", out)
	}
}
