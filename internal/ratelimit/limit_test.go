package ratelimit

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseLimit(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		in   string
		want Limit
		str  string
	}{
		{"", Unlimited, "off"},
		{"0", Unlimited, "off"},
		{"off", Unlimited, "off"},
		{" OFF ", Unlimited, "off"},
		{"30/s", Limit{{30, time.Second}}, "30/s"},
		{"1/s", Limit{{1, time.Second}}, "1/s"},
		{"20/m", Limit{{20, time.Minute}}, "20/m"},
		{"100/h", Limit{{100, time.Hour}}, "100/h"},
		{" 5 / min ", Limit{{5, time.Minute}}, "5/m"},
		{"3/second", Limit{{3, time.Second}}, "3/s"},
		{"20/6s", Limit{{20, 6 * time.Second}}, "20/6s"},
		{"30/100ms", Limit{{30, 100 * ms}}, "30/100ms"},
		{"1/1.5s", Limit{{1, 1500 * ms}}, "1/1.5s"},
		{"1/1s", Limit{{1, time.Second}}, "1/s"},
		{"1/60s", Limit{{1, time.Minute}}, "1/m"},
		{"1/1m30s", Limit{{1, 90 * time.Second}}, "1/1m30s"},
		{"20/2m0s", Limit{{20, 2 * time.Minute}}, "20/2m"},
		{"30/333.333ms", Limit{{30, 333333 * time.Microsecond}}, "30/333.333ms"},
		{"1000/s", Limit{{1000, time.Second}}, "1000/s"},
		{"0.5/s", Limit{{1, 2 * time.Second}}, "1/2s"},
		{".5/s", Limit{{1, 2 * time.Second}}, "1/2s"},
		{"0.25/m", Limit{{1, 4 * time.Minute}}, "1/4m"},
		{"1/s,20/m", Limit{{1, time.Second}, {20, time.Minute}}, "1/s,20/m"},
		{" 1/s , 20/m ", Limit{{1, time.Second}, {20, time.Minute}}, "1/s,20/m"},
		{"1/s+20/m", Limit{{1, time.Second}, {20, time.Minute}}, "1/s,20/m"},
		{"1/100ms,20/6s", Limit{{1, 100 * ms}, {20, 6 * time.Second}}, "1/100ms,20/6s"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLimit(tc.in)
			if err != nil {
				t.Fatalf("ParseLimit(%q) error: %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseLimit(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Errorf("String() = %q, want %q", s, tc.str)
			}
			if got.Off() != (len(tc.want) == 0) {
				t.Errorf("Off() = %v", got.Off())
			}
			back, err := ParseLimit(got.String())
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Errorf("String %q parses back to %v, %v", got.String(), back, err)
			}
		})
	}
}

func TestParseLimitErrors(t *testing.T) {
	t.Parallel()
	const form = `must be one or more windows "N/span" separated by commas`
	tests := []struct{ in, want string }{
		{"30", form},
		{"30/d", form},
		{"/s", form},
		{"-1/s", form},
		{"1e3/s", form},
		{"inf/s", form},
		{"1.2.3/s", form},
		{"30/", form},
		{"30/-1s", form},
		{"30/0s", form},
		{"30/ms", form},
		{"30 per second", form},
		{"0/s", `allows 0 sends, which would block every message; use "off"`},
		{"0.0/m", `use "off"`},
		{"2.5/s", `has the fractional send count 2.5; write whole sends per span, e.g. "5/2s"`},
		{"1.5/m", `e.g. "3/2m"`},
		{"1.001/s", `e.g. "5/2s" rather than "2.5/s"`},
		{"off,1/s", `mixes "off" with windows; write either "off" alone or only the windows`},
		{"1/s,off", `mixes "off"`},
		{"1/s,,20/m", `has an empty window; separate windows with single ","`},
		{"1/s,", `has an empty window`},
		{"1/s,2.5/s", `has the window "2.5/s", which has the fractional send count 2.5`},
		{"1/100us", `has a span of 100µs, below the 1ms minimum`},
		{"20000/s", `allows 20000 sends per span, more than 10000`},
		{"99999999999/s", `more than 10000`},
		{"0.000000000001/h", "too slow"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLimit(tc.in)
			if err == nil {
				t.Fatalf("ParseLimit(%q) = %v, want an error", tc.in, got)
			}
			if got != nil {
				t.Errorf("ParseLimit(%q) returned %#v with its error", tc.in, got)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseLimit(%q) error %q should quote the input and contain %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestLimitText(t *testing.T) {
	t.Parallel()
	var ws Limit
	if err := ws.UnmarshalText([]byte("1/s,20/m")); err != nil {
		t.Fatal(err)
	}
	b, err := ws.MarshalText()
	if err != nil || string(b) != "1/s,20/m" {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	if err := ws.UnmarshalText([]byte("fast")); err == nil {
		t.Fatal("UnmarshalText accepted garbage")
	}
	if !reflect.DeepEqual(ws, Limit{{1, time.Second}, {20, time.Minute}}) {
		t.Fatalf("failed UnmarshalText changed the value to %v", ws)
	}
	if s := Limit(nil).String(); s != "" {
		t.Errorf("nil Limit renders %q, want \"\"", s)
	}
	if Limit(nil).Off() || !Unlimited.Off() {
		t.Error("Off() must tell an unset limit from Unlimited")
	}
}

func TestLimitShortestAndCheck(t *testing.T) {
	t.Parallel()
	ws := Limit{{20, time.Minute}, {1, time.Second}}
	if sh := ws.Shortest(); sh != time.Second {
		t.Errorf("Shortest() = %v", sh)
	}
	if sh := Unlimited.Shortest(); sh != 0 {
		t.Errorf("Unlimited.Shortest() = %v", sh)
	}
	for _, bad := range []Limit{{{0, time.Second}}, {{1, 0}}, {{-1, time.Second}}, {{1, time.Second}, {MaxWindowSends + 1, time.Hour}}} {
		if bad.check() == nil {
			t.Errorf("%#v.check() accepted a malformed limit", bad)
		}
	}
	if err := ws.check(); err != nil {
		t.Errorf("check(%v) = %v", ws, err)
	}
}

// FuzzParseLimit checks that ParseLimit never panics, that accepted
// limits are well-formed, and that String produces text ParseLimit maps
// back to the same value.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"30/s", "0.5/s", "20/m", "100/h", "off", "10/30s", "1/s,20/m", "1/s+20/6s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws, err := ParseLimit(s)
		if err != nil {
			if ws != nil {
				t.Fatalf("ParseLimit(%q) returned %v with error %v", s, ws, err)
			}
			return
		}
		if ws == nil {
			t.Fatalf("ParseLimit(%q) returned a nil (unset) limit", s)
		}
		if err := ws.check(); err != nil {
			t.Fatalf("ParseLimit(%q) = %v, which check rejects: %v", s, ws, err)
		}
		back, err := ParseLimit(ws.String())
		if err != nil || !reflect.DeepEqual(back, ws) {
			t.Fatalf("ParseLimit(%q) = %v; String %q parses to %v, %v", s, ws, ws.String(), back, err)
		}
	})
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		l       Limit
		rate    float64
		spacing time.Duration
	}{
		{Per(30, time.Second), 30, time.Second / 30},
		{Per(1, time.Second).And(Per(20, time.Minute)), 20.0 / 60, 3 * time.Second},
		{Unlimited, 0, 0},
		{nil, 0, 0},
	} {
		if r, s := c.l.Rate(), c.l.Spacing(); r != c.rate || s != c.spacing {
			t.Errorf("%s: Rate, Spacing = %v, %v; want %v, %v", c.l, r, s, c.rate, c.spacing)
		}
	}
}
