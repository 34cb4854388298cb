package silences

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/herald-dev/herald/internal/keys"
)

// cache holds the live silences of the process, compiled, read from Redis
// at most every Config.CacheTTL. A reload compiles only the silences it
// has not compiled in the version Redis holds: the version of a record is
// its meta entry ("rev:size", rev counting its writes) and its end, so an
// expiry or any rewrite of the record replaces it.
type cache struct {
	mu       sync.Mutex
	live     []Silence
	byID     map[string]compiled // the live silences, compiled, by id
	loadedAt time.Time           // wall clock of the last successful load; zero: never or invalidated
	okAt     time.Time           // the same, never reset by invalidate (for StaleFor)
	failing  bool                // the last load failed (logged once until one succeeds)
}

// compiled is a silence compiled for matching, with the version of its
// record it was compiled from; with skip, that version is not applied (an
// unreadable record, or one over the limits on regular expressions),
// and it is kept only so that it is not read again.
type compiled struct {
	version string
	sil     Silence
	skip    bool
}

// version names one version of a silence's record: its meta entry and its
// end (Unix ms).
func version(meta string, end int64) string { return meta + "@" + strconv.FormatInt(end, 10) }

func (c *cache) invalidate() {
	c.mu.Lock()
	c.loadedAt = time.Time{}
	c.mu.Unlock()
}

// seed adds a silence this process compiled when creating it, so that the
// next reload does not compile it again.
func (c *cache) seed(sil Silence, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = make(map[string]compiled)
	}
	c.byID[sil.ID] = compiled{version: v, sil: sil}
}

// live returns the silences in force or to come, from the cache when it
// is younger than CacheTTL.
func (s *Store) live(ctx context.Context) ([]Silence, error) {
	c := &s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loadedAt.IsZero() && time.Since(c.loadedAt) < s.cfg.CacheTTL {
		return c.live, nil
	}
	list, byID, err := s.reload(ctx, c.byID)
	if err != nil {
		if !c.okAt.IsZero() && time.Since(c.okAt) < s.cfg.StaleFor {
			if !c.failing {
				s.cfg.Logger.Warn("silences not reloaded; using the ones read last", "read_ago", time.Since(c.okAt).Round(time.Millisecond), "error", err)
			}
			c.failing = true
			return c.live, nil
		}
		return nil, err
	}
	if c.failing {
		s.cfg.Logger.Info("silences reloaded again")
	}
	c.live, c.byID, c.loadedAt, c.okAt, c.failing = list, byID, time.Now(), time.Now(), false
	return list, nil
}

// reload reads the live silences' ids and versions, reuses those of known
// in the same version, and fetches and compiles the others in one round
// trip. It returns them soonest end first, and by id.
func (s *Store) reload(ctx context.Context, known map[string]compiled) ([]Silence, map[string]compiled, error) {
	flat, err := liveScript.Run(ctx, s.rdb, silenceKeys(), ms(s.cfg.Now())).StringSlice()
	if err != nil {
		return nil, nil, unavailable("list", err)
	}
	ids := make([]string, 0, len(flat)/3)
	byID := make(map[string]compiled, len(flat)/3)
	versions := make(map[string]string)
	for i := 0; i+2 < len(flat); i += 3 {
		id := flat[i]
		end, _ := strconv.ParseFloat(flat[i+1], 64)
		v := version(flat[i+2], int64(end))
		ids = append(ids, id)
		if c, ok := known[id]; ok && c.version == v {
			byID[id] = c
		} else {
			versions[id] = v
		}
	}
	if err := s.compileMissing(ctx, versions, byID); err != nil {
		return nil, nil, err
	}
	list := make([]Silence, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok && !c.skip {
			list = append(list, c.sil)
		}
	}
	return list, byID, nil
}

// compileMissing fetches the records of versions (id → version), compiles
// them and adds them to byID. A record gone meanwhile is skipped; one
// rewritten meanwhile is kept under the older version, so the next reload
// compiles it again.
func (s *Store) compileMissing(ctx context.Context, versions map[string]string, byID map[string]compiled) error {
	if len(versions) == 0 {
		return nil
	}
	ids := make([]string, 0, len(versions))
	for id := range versions {
		ids = append(ids, id)
	}
	raws, err := s.rdb.HMGet(ctx, keys.Silences(), ids...).Result()
	if err != nil {
		return unavailable("list", err)
	}
	for i, raw := range raws {
		if str, ok := raw.(string); ok {
			byID[ids[i]] = s.compileRecord(ids[i], versions[ids[i]], str)
		}
	}
	return nil
}

// compileRecord decodes and compiles one record. One that cannot be read,
// or whose regular expression is over Config.MaxMatcherProgram (stored
// before the limit, or by hand), is not applied: compiling and matching
// it could stall every alert. It is logged once per version.
func (s *Store) compileRecord(id, v, raw string) compiled {
	sil, err := decode(raw)
	for i := range sil.Matchers {
		m := &sil.Matchers[i]
		if !m.IsRegex || err != nil {
			continue
		}
		if size, _, perr := programSize(m.Value, s.cfg.MaxMatcherProgram); perr == nil && size > s.cfg.MaxMatcherProgram {
			err = fmt.Errorf("matchers[%d] compiles to about %d regular-expression instructions, over the limit of %d: expire it and create a smaller one",
				i, size, s.cfg.MaxMatcherProgram)
		}
	}
	if err == nil {
		err = sil.compile()
	}
	if err != nil {
		s.cfg.Logger.Error("a stored silence is not applied", "silence", id, "error", err)
		return compiled{version: v, skip: true}
	}
	s.compiles.Add(1)
	return compiled{version: v, sil: sil}
}
