package silences

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/keys"
)

// TestExpiredCapAndPages: of 1,200 silences created and expired, the
// 1,000 last expired are kept (the oldest go first), and the listing
// pages through them completely, latest end first, without duplicates.
func TestExpiredCapAndPages(t *testing.T) {
	t.Parallel()
	onBoth(t, testExpiredCapAndPages)
}

func testExpiredCapAndPages(t *testing.T, mk func(...func(*Config)) *fixture) {
	f := mk()
	ctx := context.Background()
	var made []string
	for i := 0; i < 1200; i++ {
		sil := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", strconv.Itoa(i))}, Duration: time.Hour})
		if _, err := f.st.Expire(ctx, sil.ID); err != nil {
			t.Fatal(err)
		}
		made = append(made, sil.ID)
		if i%7 == 0 {
			f.clock.Add(time.Millisecond) // some ends shared by several silences, some not
		}
	}
	for _, k := range []string{keys.Silences(), metaKey()} {
		if n := f.rdb.HLen(ctx, k).Val(); n != defaultMaxExpired {
			t.Fatalf("%s holds %d silences, want %d", k, n, defaultMaxExpired)
		}
	}
	if n := f.rdb.ZCard(ctx, keys.SilenceEnds()).Val(); n != defaultMaxExpired {
		t.Fatalf("ends hold %d silences", n)
	}
	// Ends are shared by the silences 7k-6 to 7k: the 200 removed are
	// those up to 196 and 3 of 197 to 203 (the smallest ids).
	for i, id := range made {
		_, err := f.st.Get(ctx, id)
		if i <= 196 && !errors.Is(err, errNotFound) || i > 203 && err != nil {
			t.Fatalf("silence %d: %v", i, err)
		}
	}
	h := f.st.Handler()
	for _, state := range []string{"expired", "all"} {
		seen := pageAll(t, h, "/v1/silences?state="+state+"&limit=7")
		if len(seen) != defaultMaxExpired {
			t.Fatalf("state=%s: %d silences listed", state, len(seen))
		}
		for _, id := range made[204:] {
			if !seen[id] {
				t.Fatalf("state=%s: %s not listed", state, id)
			}
		}
	}
	cur := f.st.mustPage(t, filterExpired, 10, "").NextCursor
	if _, err := f.st.ListPage(ctx, FilterAll, 10, cur); !errors.Is(err, errBadCursor) {
		t.Fatalf("a cursor of another state: %v", err)
	}
	if code, _ := call(t, h, "GET", "/v1/silences?state=all&cursor="+cur, ""); code != http.StatusBadRequest {
		t.Fatalf("a cursor of another state: %d", code)
	}
}

// pageAll follows next_cursor from path and returns the ids listed,
// failing on a duplicate or an end out of order.
func pageAll(t *testing.T, h http.Handler, path string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	cursor := ""
	desc := strings.Contains(path, "state=expired")
	var last time.Time
	for pages := 0; ; pages++ {
		p := path
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		code, body := call(t, h, "GET", p, "")
		l := decodeAs[list](t, body)
		if code != http.StatusOK || pages > 2000 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		for _, v := range l.Silences {
			if seen[v.ID] {
				t.Fatalf("%s listed twice", v.ID)
			}
			if !last.IsZero() && (desc && v.EndsAt.After(last) || !desc && v.EndsAt.Before(last)) {
				t.Fatalf("%s out of order", v.ID)
			}
			seen[v.ID], last = true, v.EndsAt
		}
		if l.NextCursor == "" {
			return seen
		}
		cursor = l.NextCursor
	}
}

func (s *Store) mustPage(t *testing.T, f Filter, limit int, cursor string) page {
	t.Helper()
	p, err := s.ListPage(context.Background(), f, limit, cursor)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLivePages: live silences page soonest end first; expiring one
// between pages lists nothing twice; the last page has no cursor.
func TestLivePages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var made []Silence
	for i := 0; i < 25; i++ {
		made = append(made, mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", strconv.Itoa(i))}, Duration: time.Duration(1+i%5) * time.Hour}))
	}
	p1 := f.st.mustPage(t, FilterLive, 10, "")
	if len(p1.Silences) != 10 || p1.NextCursor == "" {
		t.Fatalf("first page: %d, %q", len(p1.Silences), p1.NextCursor)
	}
	if _, err := f.st.Expire(context.Background(), p1.Silences[3].ID); err != nil {
		t.Fatal(err)
	}
	p2 := f.st.mustPage(t, FilterLive, 10, p1.NextCursor)
	p3 := f.st.mustPage(t, FilterLive, 10, p2.NextCursor)
	if len(p2.Silences) != 10 || len(p3.Silences) != 5 || p3.NextCursor != "" {
		t.Fatalf("pages of %d and %d, last cursor %q", len(p2.Silences), len(p3.Silences), p3.NextCursor)
	}
	seen := map[string]bool{}
	for _, p := range []page{p1, p2, p3} {
		for _, s := range p.Silences {
			if seen[s.ID] {
				t.Fatalf("%s twice", s.ID)
			}
			seen[s.ID] = true
		}
	}
	if len(seen) != len(made) {
		t.Fatalf("%d listed of %d", len(seen), len(made))
	}
	if all := f.st.mustPage(t, FilterLive, 24, ""); len(all.Silences) != 24 || all.NextCursor != "" {
		t.Fatalf("a page ending on the last silence: %d, %q", len(all.Silences), all.NextCursor)
	}
	short := f.st.mustPage(t, FilterLive, 23, "")
	if rest := f.st.mustPage(t, FilterLive, 23, short.NextCursor); len(rest.Silences) != 1 || rest.NextCursor != "" {
		t.Fatalf("after a page of 23: %d, %q", len(rest.Silences), rest.NextCursor)
	}
}

// TestCollectTrimsExpired: silences that expire by time, not through
// Expire, are trimmed to Config.MaxExpired by Collect.
func TestCollectTrimsExpired(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, mk func(...func(*Config)) *fixture) {
		f := mk(func(c *Config) { c.MaxExpired = 3 })
		var made []Silence
		for i := 0; i < 5; i++ {
			made = append(made, mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Duration(i+1) * time.Minute}))
		}
		live := mustCreate(t, f.st, Input{Matchers: []Matcher{eq("team", "db")}, Duration: time.Hour})
		f.clock.Add(10 * time.Minute)
		if n, err := f.st.Collect(context.Background()); err != nil || n != 2 {
			t.Fatalf("Collect = %d, %v", n, err)
		}
		l, _ := f.st.List(context.Background(), FilterAll)
		if ids(l) != made[2].ID+","+made[3].ID+","+made[4].ID+","+live.ID {
			t.Fatalf("kept %s", ids(l))
		}
	})
}
