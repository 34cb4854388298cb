package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     Rate
		interval time.Duration
		str      string
	}{
		{"", Rate{}, 0, "off"},
		{"0", Rate{}, 0, "off"},
		{"off", Rate{}, 0, "off"},
		{" OFF ", Rate{}, 0, "off"},
		{"30/s", Rate{30, time.Second}, time.Second / 30, "30/s"},
		{"1/s", Rate{1, time.Second}, time.Second, "1/s"},
		{"0.5/s", Rate{0.5, time.Second}, 2 * time.Second, "0.5/s"},
		{".5/s", Rate{0.5, time.Second}, 2 * time.Second, "0.5/s"},
		{"20/m", Rate{20, time.Minute}, 3 * time.Second, "20/m"},
		{"100/h", Rate{100, time.Hour}, 36 * time.Second, "100/h"},
		{" 5 / min ", Rate{5, time.Minute}, 12 * time.Second, "5/m"},
		{"3/second", Rate{3, time.Second}, time.Second / 3, "3/s"},
		{"10/30s", Rate{10, 30 * time.Second}, 3 * time.Second, "10/30s"},
		{"1/1s", Rate{1, time.Second}, time.Second, "1/s"},
		{"1/1m30s", Rate{1, 90 * time.Second}, 90 * time.Second, "1/1m30s"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRate(tc.in)
			if err != nil {
				t.Fatalf("ParseRate(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("ParseRate(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if iv := got.Interval(); iv != tc.interval {
				t.Errorf("Interval() = %v, want %v", iv, tc.interval)
			}
			if s := got.String(); s != tc.str {
				t.Errorf("String() = %q, want %q", s, tc.str)
			}
			if got.IsZero() != (tc.want == Rate{}) {
				t.Errorf("IsZero() = %v", got.IsZero())
			}
		})
	}
}

func TestParseRateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"30", `"N/s", "N/m" or "N/h"`},
		{"30/d", `"N/s", "N/m" or "N/h"`},
		{"/s", `"N/s", "N/m" or "N/h"`},
		{"-1/s", `"N/s", "N/m" or "N/h"`},
		{"1e3/s", `"N/s", "N/m" or "N/h"`},
		{"inf/s", `"N/s", "N/m" or "N/h"`},
		{"1.2.3/s", `"N/s", "N/m" or "N/h"`},
		{"30/", `"N/s", "N/m" or "N/h"`},
		{"30/-1s", `"N/s", "N/m" or "N/h"`},
		{"30/0s", `"N/s", "N/m" or "N/h"`},
		{"0/s", `use "off"`},
		{"0.0/m", `use "off"`},
		{"2000000000/s", "faster than one event per nanosecond"},
		{"0.000000000001/h", "too slow"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRate(tc.in)
			if err == nil {
				t.Fatalf("ParseRate(%q) = %+v, want an error", tc.in, got)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseRate(%q) error %q should quote the input and contain %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestRateText(t *testing.T) {
	t.Parallel()
	var r Rate
	if err := r.UnmarshalText([]byte("20/m")); err != nil {
		t.Fatal(err)
	}
	b, err := r.MarshalText()
	if err != nil || string(b) != "20/m" {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	if err := r.UnmarshalText([]byte("fast")); err == nil {
		t.Fatal("UnmarshalText accepted garbage")
	}
	if r != (Rate{20, time.Minute}) {
		t.Fatalf("failed UnmarshalText changed the value to %+v", r)
	}
}

func TestRateIntervalMalformed(t *testing.T) {
	t.Parallel()
	for _, r := range []Rate{{Events: 5}, {Per: time.Second}, {Events: -1, Per: time.Second}} {
		if iv := r.Interval(); iv != 0 {
			t.Errorf("%+v.Interval() = %v, want 0", r, iv)
		}
		if r.check() == nil {
			t.Errorf("%+v.check() accepted a malformed rate", r)
		}
	}
}

func TestLimitString(t *testing.T) {
	t.Parallel()
	if s := (Limit{Rate: Rate{30, time.Second}, Burst: 10}).String(); s != "30/s burst 10" {
		t.Errorf("got %q", s)
	}
	if s := (Limit{}).String(); s != "off" {
		t.Errorf("got %q", s)
	}
}

// FuzzParseRate checks that ParseRate never panics, that accepted rates are
// well-formed, and that String produces text ParseRate maps back to the same
// value.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"30/s", "0.5/s", "20/m", "100/h", "off", "10/30s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			if !r.IsZero() {
				t.Fatalf("ParseRate(%q) returned %+v with error %v", s, r, err)
			}
			return
		}
		if r.IsZero() {
			return
		}
		if !(r.Events > 0) || r.Per <= 0 || r.Interval() < 1 {
			t.Fatalf("ParseRate(%q) = %+v (interval %v) is not a usable rate", s, r, r.Interval())
		}
		back, err := ParseRate(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %+v; String %q parses to %+v, %v", s, r, r.String(), back, err)
		}
	})
}
