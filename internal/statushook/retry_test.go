package statushook

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestDelayFollowsTheSvixSchedule(t *testing.T) {
	want := []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	var total time.Duration
	for i, w := range want {
		got, ok := Delay(i + 1)
		if !ok || got != w {
			t.Errorf("Delay(%d) = %s, %v; want %s, true", i+1, got, ok, w)
		}
		total += got
	}
	if _, ok := Delay(len(want) + 1); ok {
		t.Errorf("Delay(%d) is not exhausted", len(want)+1)
	}
	if d, ok := Delay(0); !ok || d != 0 {
		t.Errorf("Delay(0) = %s, %v; want the first attempt", d, ok)
	}
	// Svix: "an attempt that fails three times before eventually succeeding
	// will be delivered roughly 35 minutes and 5 seconds following the
	// first attempt".
	var four time.Duration
	for i := 1; i <= 4; i++ {
		d, _ := Delay(i)
		four += d
	}
	if four != 35*time.Minute+5*time.Second || MaxAttempts != 8 {
		t.Errorf("fourth attempt at %s, %d attempts", four, MaxAttempts)
	}
	if total != 27*time.Hour+35*time.Minute+5*time.Second {
		t.Errorf("last attempt at %s", total)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		err    error
		want   Outcome
	}{
		{200, nil, Delivered},
		{204, nil, Delivered},
		{299, nil, Delivered},
		{410, &StatusError{Status: 410}, Disable},
		{0, &URLError{Field: CallbackURLField, Reason: "x"}, Disable},
		{0, fmt.Errorf("posting: %w", &URLError{Field: CallbackURLField, Reason: "x"}), Disable},
		{429, &StatusError{Status: 429}, Retry},
		{500, &StatusError{Status: 500}, Retry},
		{503, &StatusError{Status: 503}, Retry},
		{302, &StatusError{Status: 302}, Retry},
		{404, &StatusError{Status: 404}, Retry},
		{400, &StatusError{Status: 400}, Retry},
		{0, context.DeadlineExceeded, Retry},
		{0, errors.New("connection refused"), Retry},
		{0, &AddressError{Host: "x", Reason: "loopback"}, Retry},
	}
	for _, c := range cases {
		if got := Classify(c.status, c.err); got != c.want {
			t.Errorf("Classify(%d, %v) = %s, want %s", c.status, c.err, got, c.want)
		}
	}
}
