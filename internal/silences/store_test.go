package silences

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

func ids(list []Silence) string {
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return strings.Join(out, ",")
}

// TestStoreCRUD: create, read, list by state, expire, and expiring twice.
func TestStoreCRUD(t *testing.T) {
	t.Parallel()
	onBoth(t, testStoreCRUD)
}

func testStoreCRUD(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	ctx := context.Background()
	active := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour, Comment: "maintenance", CreatedBy: "ana"})
	pending := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "web")}, StartsAt: t0.Add(time.Hour), EndsAt: t0.Add(3 * time.Hour)})
	if active.ID == "" || active.ID == pending.ID {
		t.Fatalf("ids %q, %q", active.ID, pending.ID)
	}
	got, err := f.st.Get(ctx, active.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Comment != "maintenance" || got.CreatedBy != "ana" || !got.EndsAt.Equal(t0.Add(time.Hour)) || len(got.Matchers) != 1 {
		t.Fatalf("Get = %+v", got)
	}
	if _, err := f.st.Get(ctx, "nope"); !errors.Is(err, errNotFound) {
		t.Fatalf("Get(unknown) = %v", err)
	}
	list := func(fl Filter) string {
		t.Helper()
		l, err := f.st.List(ctx, fl)
		if err != nil {
			t.Fatal(err)
		}
		return ids(l)
	}
	both := active.ID + "," + pending.ID
	if got := list(FilterLive); got != both {
		t.Fatalf("live = %s, want %s", got, both)
	}
	if list(FilterActive) != active.ID || list(filterPending) != pending.ID || list(filterExpired) != "" {
		t.Fatalf("by state: %s / %s / %s", list(FilterActive), list(filterPending), list(filterExpired))
	}

	f.clock.Add(10 * time.Minute)
	exp, err := f.st.Expire(ctx, active.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.EndsAt.Equal(t0.Add(10*time.Minute)) || exp.State(f.clock.Now()) != stateExpired {
		t.Fatalf("expired = %+v", exp)
	}
	// A pending silence expired now never starts.
	f.clock.Add(time.Minute)
	expP, err := f.st.Expire(ctx, pending.ID)
	if err != nil || !expP.StartsAt.Equal(expP.EndsAt) {
		t.Fatalf("expired pending = %+v, %v", expP, err)
	}
	if list(FilterLive) != "" || list(filterExpired) != pending.ID+","+active.ID || list(FilterAll) != active.ID+","+pending.ID {
		t.Fatalf("after expiry: live %q, expired %q, all %q", list(FilterLive), list(filterExpired), list(FilterAll))
	}
	// Expiring again changes nothing.
	f.clock.Add(time.Minute)
	again, err := f.st.Expire(ctx, active.ID)
	if err != nil || !again.EndsAt.Equal(exp.EndsAt) {
		t.Fatalf("second expiry = %+v, %v", again, err)
	}
	if _, err := f.st.Expire(ctx, "nope"); !errors.Is(err, errNotFound) {
		t.Fatalf("Expire(unknown) = %v", err)
	}
}

// TestStoreCap: at most MaxSilences live silences; expired ones do not
// count.
func TestStoreCap(t *testing.T) {
	t.Parallel()
	onBoth(t, testStoreCap)
}

func testStoreCap(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk(func(c *Config) { c.MaxSilences = 2 })
	in := Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour}
	a := mustCreate(t, f.st, in)
	mustCreate(t, f.st, in)
	if _, err := f.st.Create(context.Background(), Input{Matchers: in.Matchers, Duration: time.Hour, CreatedBy: "x"}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third silence: %v", err)
	}
	if _, err := f.st.Expire(context.Background(), a.ID); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, f.st, in)
}

// TestLiveProgramBudget: the regular expressions of the live silences
// (pending ones too) created through any producer stay within
// Config.MaxLiveProgram; the one that would pass it is refused with a
// validation error naming matchers; exact matchers cost nothing; an
// expiry frees its share.
func TestLiveProgramBudget(t *testing.T) {
	t.Parallel()
	onBoth(t, testLiveProgramBudget)
}

func testLiveProgramBudget(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	other, err := New(Config{Redis: f.rdb, Items: f.items, Logger: quietLogger(), Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := largestWithin(t, func(n int) string { return strings.Repeat("(.*)", n) + "x" }, defaultMaxSilenceProgram)
	var made []Silence
	for i := 0; i < defaultMaxLiveProgram/defaultMaxSilenceProgram; i++ {
		st := f.st
		if i%2 == 1 {
			st = other
		}
		made = append(made, mustCreate(t, st, Input{Matchers: []Matcher{re("l", big)}, StartsAt: t0.Add(time.Duration(i) * time.Minute), Duration: time.Hour}))
	}
	room := defaultMaxLiveProgram - len(made)*made[0].ProgramSize
	small := largestWithin(t, func(n int) string { return strings.Repeat("a", n) }, room+1)
	_, err = other.Create(ctx, Input{Matchers: []Matcher{re("l", small)}, Duration: time.Hour, CreatedBy: "x"})
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != "matchers" ||
		!strings.Contains(verr.Fields[0].Message, fmt.Sprintf("the limit for all of them is %d", defaultMaxLiveProgram)) {
		t.Fatalf("over the budget: %v", err)
	}
	mustCreate(t, other, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour})
	if _, err := f.st.Expire(ctx, made[2].ID); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, other, Input{Matchers: []Matcher{re("l", small)}, Duration: time.Hour})
}

// TestExpiryAndRetention: a silence stops matching at its end, is listed
// as expired for the retention, and is then removed.
func TestExpiryAndRetention(t *testing.T) {
	t.Parallel()
	onBoth(t, testExpiryAndRetention)
}

func testExpiryAndRetention(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk(func(c *Config) { c.Retention = time.Hour; c.CacheTTL = minCacheTTL })
	ctx := context.Background()
	sil := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("severity", "warning")}, Duration: 30 * time.Minute})
	a := &alerts.Alert{Title: "x", Severity: alerts.SeverityWarning}
	check := func(at time.Time, want string) {
		t.Helper()
		f.clock.Set(at)
		time.Sleep(2 * minCacheTTL) // let the cache expire
		got, err := f.st.Silenced(ctx, a, at)
		if err != nil || got != want {
			t.Fatalf("at %v: Silenced = %q, %v; want %q", at.Sub(t0), got, err, want)
		}
	}
	check(t0.Add(29*time.Minute), sil.ID)
	check(t0.Add(30*time.Minute-time.Millisecond), sil.ID)
	check(t0.Add(30*time.Minute), "")
	f.clock.Set(t0.Add(90*time.Minute - time.Second))
	if n, err := f.st.Collect(ctx); err != nil || n != 0 {
		t.Fatalf("Collect within the retention: %d, %v", n, err)
	}
	if l, _ := f.st.List(ctx, filterExpired); ids(l) != sil.ID {
		t.Fatalf("expired list %q", ids(l))
	}
	f.clock.Set(t0.Add(90*time.Minute + time.Millisecond))
	if n, err := f.st.Collect(ctx); err != nil || n != 1 {
		t.Fatalf("Collect after the retention: %d, %v", n, err)
	}
	if _, err := f.st.Get(ctx, sil.ID); !errors.Is(err, errNotFound) {
		t.Fatalf("Get after collection: %v", err)
	}
	if n := f.rdb.Exists(ctx, keys.Silences(), keys.SilenceEnds(), metaKey()).Val(); n != 0 {
		t.Fatal("keys left behind")
	}
}

// TestSilencedCache: a silence created elsewhere is seen once the cache is
// older than CacheTTL; one created through this store at once; a pending
// silence applies from its start without a reload; Redis trouble keeps the
// last silences for StaleFor, then fails with ErrUnavailable.
func TestSilencedCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.CacheTTL = 300 * time.Millisecond; c.StaleFor = time.Second })
	other, err := New(Config{Redis: f.rdb, Items: f.items, Logger: quietLogger(), Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := &alerts.Alert{Title: "x", Severity: alerts.SeverityWarning, Labels: map[string]string{"team": "db"}}
	if id, err := f.st.Silenced(ctx, a, t0); err != nil || id != "" {
		t.Fatalf("no silences: %q, %v", id, err)
	}
	sil := mustCreate(t, other, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour})
	if id, _ := f.st.Silenced(ctx, a, t0); id != "" {
		t.Fatalf("seen before the cache expired: %q", id)
	}
	time.Sleep(350 * time.Millisecond)
	if id, _ := f.st.Silenced(ctx, a, t0); id != sil.ID {
		t.Fatalf("not seen after CacheTTL: %q", id)
	}
	// Through this store: at once.
	pend := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "db")}, StartsAt: t0.Add(time.Minute), Duration: 3 * time.Hour})
	if _, err := f.st.Expire(ctx, sil.ID); err != nil {
		t.Fatal(err)
	}
	if id, _ := f.st.Silenced(ctx, a, t0); id != "" {
		t.Fatalf("expired through this store, still silenced by %q", id)
	}
	if id, _ := f.st.Silenced(ctx, a, t0.Add(time.Minute)); id != pend.ID {
		t.Fatalf("pending silence at its start: %q", id)
	}
	// Redis down: the last silences serve for StaleFor.
	f.mr.SetError("LOADING fake outage")
	time.Sleep(350 * time.Millisecond)
	if id, err := f.st.Silenced(ctx, a, t0.Add(time.Minute)); err != nil || id != pend.ID {
		t.Fatalf("stale: %q, %v", id, err)
	}
	time.Sleep(time.Second)
	if _, err := f.st.Silenced(ctx, a, t0.Add(time.Minute)); !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("after StaleFor: %v, want ErrUnavailable", err)
	}
	f.mr.SetError("")
	if id, err := f.st.Silenced(ctx, a, t0.Add(time.Minute)); err != nil || id != pend.ID {
		t.Fatalf("recovered: %q, %v", id, err)
	}
}

// TestSilencedPicksLastEnding: of several matching silences the one that
// ends last is named.
func TestSilencedPicksLastEnding(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour})
	long := mustCreate(t, f.st, Input{Matchers: []Matcher{re("team", "d.*")}, Duration: 5 * time.Hour})
	mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "web")}, Duration: 9 * time.Hour})
	id, err := f.st.Silenced(context.Background(), &alerts.Alert{Title: "x", Labels: map[string]string{"team": "db"}}, t0)
	if err != nil || id != long.ID {
		t.Fatalf("Silenced = %q, %v; want %q", id, err, long.ID)
	}
}

// TestRecorded: silenced alerts are listed per silence, newest first,
// across pages of the stream, and the stream is capped.
func TestRecorded(t *testing.T) {
	t.Parallel()
	onBoth(t, testRecorded)
}

func testRecorded(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk(func(c *Config) { c.MaxRecorded = 2000 })
	ctx := context.Background()
	var caught []alerts.SilencedAlert
	for i := 0; i < 1200; i++ {
		id := "s-a"
		if i%3 == 0 {
			id = "s-b"
		}
		caught = append(caught, alerts.SilencedAlert{Index: i, SilencedBy: id, Alert: alerts.Alert{Title: fmt.Sprintf("alert %d", i),
			Fingerprint: fmt.Sprintf("fp-%d", i), Source: "api", Severity: alerts.SeverityWarning, Status: alerts.StatusFiring,
			Labels: map[string]string{"n": fmt.Sprint(i)}}})
	}
	if err := f.st.Record(ctx, caught, t0); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.Recorded(ctx, "s-b", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 400 || got[0].Title != "alert 1197" || got[399].Title != "alert 0" {
		t.Fatalf("s-b: %d alerts, first %+v", len(got), got[0])
	}
	c := got[0]
	if c.SilenceID != "s-b" || c.Fingerprint != "fp-1197" || c.Source != "api" || c.Severity != "warning" || c.Status != "firing" ||
		c.Labels["n"] != "1197" || !c.At.Equal(t0) || c.ID == "" {
		t.Fatalf("record %+v", c)
	}
	if got, _ := f.st.Recorded(ctx, "s-a", 10); len(got) != 10 || got[0].Title != "alert 1199" {
		t.Fatalf("s-a limited: %d, %+v", len(got), got)
	}
	if got, _ := f.st.Recorded(ctx, "s-none", 10); got == nil || len(got) != 0 {
		t.Fatalf("unknown silence: %+v", got)
	}
}
