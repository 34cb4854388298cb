package silences

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Filter selects silences by state for List.
type Filter string

// The filters of List.
const (
	// FilterLive: the silences in force and those still to come.
	FilterLive Filter = ""
	// FilterActive, filterPending, filterExpired: one state.
	FilterActive  Filter = Filter(stateActive)
	filterPending Filter = Filter(statePending)
	filterExpired Filter = Filter(stateExpired)
	// FilterAll: every silence still kept.
	FilterAll Filter = "all"
)

// errBadCursor is returned by ListPage for a cursor it did not hand out,
// or handed out for another filter.
var errBadCursor = errors.New("silences: bad cursor")

// endRange is the part of the ends set that a filter reads: ZRANGEBYSCORE
// bounds, and whether it is listed latest end first.
type endRange struct {
	lo, hi string
	desc   bool
}

// rangeOf returns the part of the ends set f reads at now.
func rangeOf(f Filter, now time.Time) (endRange, error) {
	switch f {
	case FilterLive, FilterActive, filterPending:
		return endRange{lo: "(" + strconv.FormatInt(ms(now), 10), hi: "+inf"}, nil
	case filterExpired:
		return endRange{lo: "-inf", hi: strconv.FormatInt(ms(now), 10), desc: true}, nil
	case FilterAll:
		return endRange{lo: "-inf", hi: "+inf"}, nil
	}
	return endRange{}, fmt.Errorf("silences: unknown filter %q", f)
}

// keeps reports whether f selects sil at now.
func (f Filter) keeps(sil *Silence, now time.Time) bool {
	st := sil.State(now)
	return f == FilterAll || f == FilterLive && st != stateExpired || Filter(st) == f
}

// List returns every silence f selects, soonest end first (expired ones:
// latest end first). Live silences are at most Config.MaxSilences and
// expired ones about Config.MaxExpired; the API pages them (ListPage).
func (s *Store) List(ctx context.Context, f Filter) ([]Silence, error) {
	now := s.cfg.Now()
	r, err := rangeOf(f, now)
	if err != nil {
		return nil, err
	}
	all, err := s.load(ctx, r.lo, r.hi)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		if f.keeps(&all[i], now) {
			out = append(out, all[i])
		}
	}
	if r.desc {
		sort.SliceStable(out, func(i, j int) bool { return out[i].EndsAt.After(out[j].EndsAt) })
	}
	return out, nil
}

// load reads the silences whose end is in [lo, hi] (ZRANGEBYSCORE
// bounds), at most every silence the store may hold.
func (s *Store) load(ctx context.Context, lo, hi string) ([]Silence, error) {
	raws, err := rangeScript.Run(ctx, s.rdb, []string{keys.Silences(), keys.SilenceEnds()}, lo, hi, -1).StringSlice()
	if err != nil {
		return nil, unavailable("list", err)
	}
	out := make([]Silence, 0, len(raws))
	for _, raw := range raws {
		sil, err := decode(raw)
		if err != nil {
			s.cfg.Logger.Error("skipping an unreadable silence record", "error", err)
			continue
		}
		out = append(out, sil)
	}
	return out, nil
}

// page is one page of a listing.
type page struct {
	Silences []Silence
	// NextCursor, when not empty, is the cursor of the next page.
	NextCursor string
}

// ListPage returns up to limit silences f selects, in List's order, after
// the cursor a previous page gave (none: from the start). Pages read the
// ends set again each time, so a silence created or expired meanwhile may
// be missed but is never listed twice: ends only move earlier (an expiry)
// and new expired silences come first in their listing. Errors:
// errBadCursor, or one wrapping jobs.ErrUnavailable.
func (s *Store) ListPage(ctx context.Context, f Filter, limit int, cursor string) (page, error) {
	now := s.cfg.Now()
	r, err := rangeOf(f, now)
	if err != nil {
		return page{}, err
	}
	if limit < 1 || limit > maxListLimit {
		limit = defaultListLimit
	}
	after, err := parseCursor(f, cursor)
	if err != nil {
		return page{}, err
	}
	entries, err := s.ends(ctx, r)
	if err != nil {
		return page{}, err
	}
	if after != nil {
		entries = entries[sort.Search(len(entries), func(i int) bool { return after.before(entries[i], r.desc) }):]
	}
	return s.fill(ctx, f, now, entries, limit)
}

// entry is one member of the ends set.
type entry struct {
	id  string
	end int64
}

// ends reads the ids and ends of r, in the listing's order.
func (s *Store) ends(ctx context.Context, r endRange) ([]entry, error) {
	by := &redis.ZRangeBy{Min: r.lo, Max: r.hi}
	var zs []redis.Z
	var err error
	if r.desc {
		zs, err = s.rdb.ZRevRangeByScoreWithScores(ctx, keys.SilenceEnds(), by).Result()
	} else {
		zs, err = s.rdb.ZRangeByScoreWithScores(ctx, keys.SilenceEnds(), by).Result()
	}
	if err != nil {
		return nil, unavailable("list", err)
	}
	out := make([]entry, 0, len(zs))
	for _, z := range zs {
		id, _ := z.Member.(string)
		out = append(out, entry{id: id, end: int64(z.Score)})
	}
	return out, nil
}

// fill reads the records of entries, in order, until limit of them are
// silences f keeps, and names the cursor after the last one when entries
// remain.
func (s *Store) fill(ctx context.Context, f Filter, now time.Time, entries []entry, limit int) (page, error) {
	p := page{Silences: []Silence{}}
	next := 0
	for next < len(entries) && len(p.Silences) < limit {
		batch := entries[next:min(len(entries), next+limit-len(p.Silences))]
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.id
		}
		raws, err := s.rdb.HMGet(ctx, keys.Silences(), ids...).Result()
		if err != nil {
			return page{}, unavailable("list", err)
		}
		for i, raw := range raws {
			next++
			str, ok := raw.(string)
			if !ok {
				continue // removed meanwhile
			}
			sil, err := decode(str)
			if err != nil {
				s.cfg.Logger.Error("skipping an unreadable silence record", "silence", ids[i], "error", err)
				continue
			}
			if f.keeps(&sil, now) {
				p.Silences = append(p.Silences, sil)
			}
		}
	}
	if len(p.Silences) == limit && next < len(entries) {
		p.NextCursor = cursorOf(f, entries[next-1])
	}
	return p, nil
}

// cursorVersion starts every cursor, so that their form can change.
const cursorVersion = "c1"

// name is how a cursor names its filter.
func (f Filter) name() string {
	if f == FilterLive {
		return "live"
	}
	return string(f)
}

// cursorOf is the opaque cursor of the page after e.
func cursorOf(f Filter, e entry) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "|" + f.name() + "|" + strconv.FormatInt(e.end, 10) + "|" + e.id))
}

// parseCursor reads a cursor of f; "" is none.
func parseCursor(f Filter, c string) (*entry, error) {
	if c == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, fmt.Errorf("%w: not one that a listing gave", errBadCursor)
	}
	parts := strings.SplitN(string(raw), "|", 4)
	if len(parts) != 4 || parts[0] != cursorVersion {
		return nil, fmt.Errorf("%w: not one that a listing gave", errBadCursor)
	}
	if parts[1] != f.name() {
		return nil, fmt.Errorf("%w: it was given for another state; start again without it", errBadCursor)
	}
	end, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || parts[3] == "" || len(parts[3]) > maxIDLen {
		return nil, fmt.Errorf("%w: not one that a listing gave", errBadCursor)
	}
	return &entry{id: parts[3], end: end}, nil
}

// before reports whether the cursor c comes before e in a listing's order
// (desc: latest end first), members of one end in Redis's byte order.
func (c *entry) before(e entry, desc bool) bool {
	if desc {
		return e.end < c.end || e.end == c.end && e.id < c.id
	}
	return e.end > c.end || e.end == c.end && e.id > c.id
}
