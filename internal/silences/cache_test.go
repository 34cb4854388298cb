package silences

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/keys"
)

// TestReloadCompilesOnce: a reload compiles only the silences it has not
// compiled in their current version: not the one this store created, not
// again one created elsewhere, but again one whose record was rewritten.
func TestReloadCompilesOnce(t *testing.T) {
	t.Parallel()
	onBoth(t, testReloadCompilesOnce)
}

func testReloadCompilesOnce(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	other, err := New(Config{Redis: f.rdb, Items: f.items, Logger: quietLogger(), Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := &alerts.Alert{Title: "x", Labels: map[string]string{"team": "db", "service": "api-gw"}}
	reloads := func(want string) {
		t.Helper()
		for i := 0; i < 5; i++ {
			f.st.cache.invalidate()
			if id, err := f.st.Silenced(ctx, a, t0); err != nil || id != want {
				t.Fatalf("Silenced = %q, %v; want %q", id, err, want)
			}
		}
	}
	compiles := func(want int64) {
		t.Helper()
		if n := f.st.compiles.Load(); n != want {
			t.Fatalf("%d silences compiled, want %d", n, want)
		}
	}
	mine := mustCreate(t, f.st, Input{Matchers: []Matcher{re("service", "api-.*")}, Duration: time.Hour})
	compiles(1)
	reloads(mine.ID)
	compiles(1)
	theirs := mustCreate(t, other, Input{Matchers: []Matcher{re("team", "d.*")}, Duration: 2 * time.Hour})
	reloads(theirs.ID)
	compiles(2)

	// A rewrite (a new version in the meta entry, the same end) is compiled
	// again, and its matchers apply.
	raw := f.rdb.HGet(ctx, keys.Silences(), theirs.ID).Val()
	changed := theirs
	changed.Matchers = []Matcher{re("team", "x.*")}
	rec, _ := json.Marshal(&changed)
	if n, err := replaceScript.Run(ctx, f.rdb, silenceKeys(), theirs.ID, raw, rec, ms(theirs.EndsAt), ms(t0), defaultMaxExpired, 0).Int(); err != nil || n != 1 {
		t.Fatalf("replace: %d, %v", n, err)
	}
	reloads(mine.ID)
	compiles(3)

	// Expired elsewhere, it leaves the cache; nothing is compiled.
	if _, err := other.Expire(ctx, theirs.ID); err != nil {
		t.Fatal(err)
	}
	reloads(mine.ID)
	compiles(3)
	if len(f.st.cache.byID) != 1 {
		t.Fatalf("the cache holds %d silences", len(f.st.cache.byID))
	}
}

// TestOversizeRecordNotApplied: a record stored before the limits (here
// written by hand), with the review's expression, is neither compiled
// nor applied, and is not read again while its version holds (one log
// line for three reloads).
func TestOversizeRecordNotApplied(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	f := newFixture(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logged}, nil)) })
	ctx := context.Background()
	old := Silence{ID: "old", Matchers: []Matcher{re("team", strings.Repeat(".{0,1000}", 113))}, StartsAt: t0, EndsAt: t0.Add(time.Hour), CreatedBy: "x"}
	rec, _ := json.Marshal(&old)
	f.rdb.HSet(ctx, keys.Silences(), old.ID, rec)
	f.rdb.ZAdd(ctx, keys.SilenceEnds(), redis.Z{Score: float64(ms(old.EndsAt)), Member: old.ID})
	a := &alerts.Alert{Title: "x", Labels: map[string]string{"team": "db"}}
	for i := 0; i < 3; i++ {
		f.st.cache.invalidate()
		if id, err := f.st.Silenced(ctx, a, t0); err != nil || id != "" {
			t.Fatalf("Silenced = %q, %v", id, err)
		}
	}
	if n := strings.Count(logged.String(), "a stored silence is not applied"); n != 1 || f.st.compiles.Load() != 0 {
		t.Fatalf("logged %d times, %d compiled:\n%s", n, f.st.compiles.Load(), logged.String())
	}
	if !strings.Contains(logged.String(), "over the limit of 256") {
		t.Fatalf("log: %s", logged.String())
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
