package statushook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDefaultScheduleIsSvix(t *testing.T) {
	s := DefaultSchedule()
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	for i, w := range want {
		got, ok := s.Next(i + 1)
		if !ok || got != w {
			t.Errorf("Next(%d) = %s, %v; want %s, true", i+1, got, ok, w)
		}
	}
	if _, ok := s.Next(len(want) + 1); ok {
		t.Errorf("Next(%d) is not exhausted", len(want)+1)
	}
	if d, ok := s.Next(0); !ok || d != want[0] {
		t.Errorf("Next(0) = %s, %v; want the wait after the first attempt", d, ok)
	}
	// Svix: "an attempt that fails three times before eventually succeeding
	// will be delivered roughly 35 minutes and 5 seconds following the
	// first attempt".
	if four := s[:3].Span(); four != 35*time.Minute+5*time.Second || s.Attempts() != 8 {
		t.Errorf("fourth attempt at %s, %d attempts", four, s.Attempts())
	}
	if s.Span() != 27*time.Hour+35*time.Minute+5*time.Second {
		t.Errorf("last attempt at %s", s.Span())
	}
	if s.String() != "5s,5m,30m,2h,5h,10h,10h" {
		t.Errorf("String() = %q", s.String())
	}
}

func TestParseSchedule(t *testing.T) {
	s, err := parseSchedule(" 5s, 1h30m ,100ms")
	if err != nil || len(s) != 3 || s[1] != 90*time.Minute || s[2] != 100*time.Millisecond {
		t.Fatalf("parseSchedule = %v, %v", s, err)
	}
	if back, err := parseSchedule(DefaultSchedule().String()); err != nil || back.String() != DefaultSchedule().String() {
		t.Fatalf("the default does not read back: %v, %v", back, err)
	}
	if _, err := parseSchedule("5s,,5m"); err == nil || !strings.Contains(err.Error(), `""`) {
		t.Fatalf("an empty wait: %v", err)
	}
	if _, err := parseSchedule("5 minutes"); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Fatalf("a wait in words: %v", err)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		err    error
		want   verdict
	}{
		{200, nil, verdictDelivered},
		{204, nil, verdictDelivered},
		{299, nil, verdictDelivered},
		{410, &statusError{Status: 410}, verdictDisable},
		{0, &URLError{Field: CallbackURLField, Reason: "x"}, verdictDisable},
		{0, fmt.Errorf("posting: %w", &URLError{Field: CallbackURLField, Reason: "x"}), verdictDisable},
		{429, &statusError{Status: 429}, verdictRetry},
		{500, &statusError{Status: 500}, verdictRetry},
		{503, &statusError{Status: 503}, verdictRetry},
		{302, &statusError{Status: 302}, verdictRetry},
		{404, &statusError{Status: 404}, verdictRetry},
		{400, &statusError{Status: 400}, verdictRetry},
		{0, context.DeadlineExceeded, verdictRetry},
		{0, errors.New("connection refused"), verdictRetry},
		{0, &AddressError{Host: "x", Reason: "loopback"}, verdictRetry},
	}
	for _, c := range cases {
		if got := classify(c.status, c.err); got != c.want {
			t.Errorf("classify(%d, %v) = %s, want %s", c.status, c.err, got, c.want)
		}
	}
}
