package silences

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
)

// worstFamilies build, for n, a pattern whose matching keeps about every
// instruction of its program busy on every character of a long value
// ending in "b" (Go's NFA), with the largest Unicode tables (letters,
// non-digits), or makes the backtracker visit every instruction at every
// position before it matches (fallback): the costliest kinds of
// expression the limits allow.
var worstFamilies = map[string]func(n int) string{
	"captured-stars": func(n int) string { return strings.Repeat("(.*)", n) },
	"stars":          func(n int) string { return strings.Repeat(".*", n) },
	"any-or-a":       func(n int) string { return strings.Repeat("(?:a|.)*", n) },
	"stars-then-b":   func(n int) string { return strings.Repeat(".*", n) + "b" },
	"fallback":       func(n int) string { return "(?:" + strings.Repeat(".*", n) + "x|.*)" },
	"letters":        func(n int) string { return strings.Repeat(`\pL*`, n) },
	"non-digits":     func(n int) string { return strings.Repeat(`\PN*`, n) },
}

// worstValues are the label values matched: the longest an alert may
// carry, in ASCII (1,023 bytes: small programs run on Go's backtracker)
// and in two-byte characters (2,045 bytes: Go's NFA).
var worstValues = map[string]string{
	"ascii":    strings.Repeat("a", alerts.MaxLabelLen-4) + "b",
	"two-byte": strings.Repeat("é", alerts.MaxLabelLen-4) + "b",
}

// largestWithin returns the pattern of family with the largest n whose
// program fits in limit instructions.
func largestWithin(tb testing.TB, family func(int) string, limit int) string {
	tb.Helper()
	best := ""
	for n := 1; n < 1000; n++ {
		p := family(n)
		size, exact, err := programSize(p, limit)
		if err != nil || !exact || size > limit || len(p) > maxMatcherValue {
			break
		}
		best = p
	}
	if best == "" {
		tb.Fatal("no pattern of the family fits")
	}
	return best
}

// worstAlert has 32 labels of value v (each label within
// alerts.MaxLabelLen), which every worst family matches.
func worstAlert(v string) *alerts.Alert {
	a := &alerts.Alert{Title: "x", Severity: alerts.SeverityWarning, Source: "api", Labels: map[string]string{}}
	for i := 0; i < maxMatchers; i++ {
		a.Labels["l"+strconv.Itoa(i)] = v
	}
	if err := a.Validate(); err != nil {
		panic(err)
	}
	return a
}

// BenchmarkSilencedWorstCase matches one alert against four silences that
// each use the per-silence budget (defaultMaxSilenceProgram, together
// defaultMaxLiveProgram) with the costliest patterns the per-matcher limit
// allows, every matcher matching, on the longest label values: the worst
// an alert can meet with the default limits. It reports the 99th
// percentile of one Silenced call (p99-ms), the heap in use afterwards
// (heap-MB) and the process's peak RSS (peak-rss-MB).
//
//	go test -run '^$' -bench SilencedWorstCase -benchtime 200x ./internal/silences/
func BenchmarkSilencedWorstCase(b *testing.B) {
	for _, name := range []string{"captured-stars", "stars", "any-or-a", "stars-then-b", "fallback", "letters", "non-digits"} {
		for _, value := range []string{"ascii", "two-byte"} {
			for _, perMatcher := range []int{defaultMaxMatcherProgram, defaultMaxMatcherProgram / 2, 16} {
				b.Run(fmt.Sprintf("%s/%s/matcher=%d", name, value, perMatcher), func(b *testing.B) {
					benchWorst(b, worstFamilies[name], worstValues[value], perMatcher)
				})
			}
		}
	}
}

func benchWorst(b *testing.B, family func(int) string, value string, perMatcher int) {
	f := newRealFixture(b, func(c *Config) { c.CacheTTL = time.Hour })
	ctx := context.Background()
	pattern := largestWithin(b, family, perMatcher)
	size, _, _ := programSize(pattern, perMatcher)
	count := min(maxMatchers, defaultMaxSilenceProgram/size)
	total := 0
	for s := 0; s < 4; s++ {
		var ms []Matcher
		for i := 0; i < count; i++ {
			ms = append(ms, re("l"+strconv.Itoa(i), pattern))
		}
		sil, err := f.st.Create(ctx, Input{Matchers: ms, All: true, Duration: time.Hour, CreatedBy: "bench"})
		if err != nil {
			b.Fatalf("the limits refuse the pattern: %v", err)
		}
		total += sil.ProgramSize
	}
	a := worstAlert(value)
	if id, err := f.st.Silenced(ctx, a, t0); err != nil || id == "" {
		b.Fatalf("Silenced = %q, %v: the alert must match every matcher", id, err)
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := f.st.Silenced(ctx, a, t0); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(total), "instructions")
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

// peakRSSMB is the process's peak resident set (VmHWM), in MiB; 0 where
// /proc is missing.
func peakRSSMB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkRefuseReviewPayload is the cost of refusing the security
// review's silence: 32 matchers of ".{0,1000}" 113 times, which compiled
// in 175 ms each and took 3.65 s to create before the limits.
func BenchmarkRefuseReviewPayload(b *testing.B) {
	f := newFixture(b)
	in := Input{Matchers: reviewMatchers(), Duration: time.Hour, CreatedBy: "bench"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.st.Create(context.Background(), in); err == nil {
			b.Fatal("created")
		}
	}
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

// reviewMatchers is the payload of the security review.
func reviewMatchers() []Matcher {
	ms := make([]Matcher, maxMatchers)
	for i := range ms {
		ms[i] = re("l"+strconv.Itoa(i), strings.Repeat(".{0,1000}", 113))
	}
	return ms
}

// BenchmarkReloadUnchanged is one cache reload of 1,000 live silences that
// are compiled already: the ids and versions are read, no record.
func BenchmarkReloadUnchanged(b *testing.B) {
	f := newRealFixture(b, func(c *Config) { c.CacheTTL = time.Hour; c.MaxLiveProgram = 1 << 20 })
	ctx := context.Background()
	for i := 0; i < defaultMaxSilences; i++ {
		mustCreate(b, f.st, Input{Matchers: []Matcher{eq("team", strconv.Itoa(i)), re("service", "api-.*")}, Duration: time.Hour})
	}
	a := &alerts.Alert{Title: "x", Labels: map[string]string{"team": "none"}}
	if _, err := f.st.Silenced(ctx, a, t0); err != nil {
		b.Fatal(err)
	}
	compiles := f.st.compiles.Load()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.st.cache.invalidate()
		if _, err := f.st.Silenced(ctx, a, t0); err != nil {
			b.Fatal(err)
		}
	}
	if f.st.compiles.Load() != compiles {
		b.Fatal("a reload compiled again")
	}
}
