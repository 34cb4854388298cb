package silences

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// errNotFound is returned for a silence id the store does not hold
// (never created, or removed after its retention).
var errNotFound = errors.New("silences: no such silence")

// ErrTooMany is returned by Create when Config.MaxSilences silences are in
// force or still to come.
var ErrTooMany = errors.New("silences: too many silences")

// Store keeps silences and held messages in Redis. It is safe for
// concurrent use; one Store per process serves the API, the Router
// (alerts.Silencer and alerts.Holder) and the background loop (Start).
type Store struct {
	cfg Config
	rdb redis.UniversalClient

	cache cache
	// compiles counts the silences this store compiled for matching (in
	// Create and in the cache's reloads), so that tests can tell that each
	// version of a silence is compiled once.
	compiles atomic.Int64

	// the loop (Start, Shutdown)
	loops background.Group
	// mu guards what follows.
	mu sync.Mutex
	// When the next held message is due, as far as this process knows
	// (zero: none), and whether it knows (releaseDue).
	nextDue   time.Time
	dueKnown  bool
	idleTicks int
}

var (
	_ alerts.Silencer = (*Store)(nil)
	_ alerts.Holder   = (*Store)(nil)
)

// New validates cfg and returns a Store.
func New(cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Store{cfg: cfg, rdb: cfg.Redis}, nil
}

// unavailable wraps a Redis failure so that callers answer 503.
func unavailable(op string, err error) error {
	return fmt.Errorf("%w: silences: %s: %w", jobs.ErrUnavailable, op, err)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// metaKey is the hash of the silences' meta entries ("rev:size", see
// scripts.go), in the {herald} slot with the others.
func metaKey() string { return keys.SilenceMeta() }

// silenceKeys are the KEYS of the silences' scripts.
func silenceKeys() []string { return []string{keys.Silences(), keys.SilenceEnds(), metaKey()} }

// Create validates in and stores a new silence. Errors: a
// *jobs.ValidationError naming the bad fields (among them a silence whose
// regular expressions would take the live silences past
// Config.MaxLiveProgram), ErrTooMany, or one wrapping jobs.ErrUnavailable.
func (s *Store) Create(ctx context.Context, in Input) (Silence, error) {
	now := s.cfg.Now()
	sil, err := in.build(now, s.cfg)
	if err != nil {
		return Silence{}, err
	}
	if sil.hasRegex() {
		s.compiles.Add(1)
	}
	sil.ID = uuid.NewString()
	rec, err := json.Marshal(&sil)
	if err != nil {
		return Silence{}, err
	}
	res, err := createScript.Run(ctx, s.rdb, silenceKeys(), sil.ID, rec, ms(sil.EndsAt), ms(now), s.cfg.MaxSilences,
		sil.ProgramSize, s.cfg.MaxLiveProgram, s.cfg.MaxExpired).Int64Slice()
	durable.Wrote(ctx, keys.Silences())
	switch {
	case err != nil:
		return Silence{}, unavailable("create", err)
	case res[0] == 0:
		return Silence{}, ErrTooMany
	case res[0] == -2 && len(res) == 2:
		return Silence{}, s.overBudget(sil, res[1])
	case res[0] != 1:
		return Silence{}, fmt.Errorf("silences: the new id %s is taken (a bug)", sil.ID)
	}
	s.cache.seed(sil, version(firstMeta(sil.ProgramSize), ms(sil.EndsAt)))
	s.cache.invalidate()
	s.cfg.Logger.Info("silence created", "silence", sil.ID, "created_by", sil.CreatedBy, "starts_at", sil.StartsAt, "ends_at", sil.EndsAt,
		"matchers", len(sil.Matchers), "program_size", sil.ProgramSize, "all", sil.All)
	return sil, nil
}

// firstMeta is the meta entry createScript writes for a silence of size.
func firstMeta(size int) string { return "1:" + strconv.Itoa(size) }

// overBudget is the refusal of a silence that would take the live
// silences' regular expressions, used already, past Config.MaxLiveProgram.
func (s *Store) overBudget(sil Silence, used int64) error {
	return &jobs.ValidationError{Fields: []jobs.FieldError{{Field: "matchers", Message: fmt.Sprintf(
		"the regular expressions of the silences in force or to come compile to %d instructions and this one's to %d; "+
			"the limit for all of them is %d: expire silences no longer needed (GET /v1/silences shows each one's program_size), "+
			"or use exact values", used, sil.ProgramSize, s.cfg.MaxLiveProgram)}}}
}

// Get returns the silence id, or errNotFound.
func (s *Store) Get(ctx context.Context, id string) (Silence, error) {
	sil, _, err := s.get(ctx, id)
	return sil, err
}

// get returns the silence and its record as stored.
func (s *Store) get(ctx context.Context, id string) (Silence, string, error) {
	if id == "" || len(id) > maxIDLen {
		return Silence{}, "", errNotFound
	}
	raw, err := s.rdb.HGet(ctx, keys.Silences(), id).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Silence{}, "", errNotFound
	case err != nil:
		return Silence{}, "", unavailable("get", err)
	}
	sil, err := decode(raw)
	return sil, raw, err
}

// decode reads a stored record; its regular expressions are not compiled
// (only the cache compiles them, once per version).
func decode(raw string) (Silence, error) {
	var sil Silence
	if err := json.Unmarshal([]byte(raw), &sil); err != nil {
		return Silence{}, fmt.Errorf("silences: unreadable record: %w", err)
	}
	return sil, nil
}

// Expire ends the silence id now, whatever its state (a pending one never
// starts), and returns it. Expiring an expired silence changes nothing.
// Errors: errNotFound, or one wrapping jobs.ErrUnavailable.
func (s *Store) Expire(ctx context.Context, id string) (Silence, error) {
	for attempt := 0; attempt < 5; attempt++ {
		sil, raw, err := s.get(ctx, id)
		if err != nil {
			return Silence{}, err
		}
		now := s.cfg.Now().UTC().Truncate(time.Millisecond)
		if sil.State(now) == stateExpired {
			return sil, nil
		}
		sil.EndsAt = now
		if sil.StartsAt.After(now) {
			sil.StartsAt = now
		}
		rec, err := json.Marshal(&sil)
		if err != nil {
			return Silence{}, err
		}
		n, err := replaceScript.Run(ctx, s.rdb, silenceKeys(), id, raw, rec, ms(now), ms(now), s.cfg.MaxExpired, sil.ProgramSize).Int()
		durable.Wrote(ctx, keys.Silences())
		switch {
		case err != nil:
			return Silence{}, unavailable("expire", err)
		case n < 0:
			return Silence{}, errNotFound
		case n == 0:
			continue // changed meanwhile: read it again
		}
		s.cache.invalidate()
		s.cfg.Logger.Info("silence expired", "silence", id)
		return sil, nil
	}
	return Silence{}, unavailable("expire", errors.New("the silence kept changing; retry"))
}

// Collect removes the silences that ended more than Config.Retention ago,
// and the oldest expired ones beyond Config.MaxExpired, and returns how
// many it removed.
func (s *Store) Collect(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	cutoff := ms(now.Add(-s.cfg.Retention))
	total := 0
	for {
		n, err := collectScript.Run(ctx, s.rdb, silenceKeys(), cutoff, 500, ms(now), s.cfg.MaxExpired).Int()
		if err != nil {
			return total, unavailable("collect", err)
		}
		total += n
		if n < 500 {
			return total, nil
		}
	}
}

// Silenced implements alerts.Silencer: it returns the id of a silence in
// force at now whose matchers all match a, or "". When several do, the
// one ending last wins (then the smallest id), so that the answer is
// stable.
func (s *Store) Silenced(ctx context.Context, a *alerts.Alert, now time.Time) (string, error) {
	list, err := s.live(ctx)
	if err != nil {
		return "", err
	}
	var best *Silence
	for i := range list {
		sil := &list[i]
		if !sil.ActiveAt(now) || !sil.Matches(a) {
			continue
		}
		if best == nil || sil.EndsAt.After(best.EndsAt) || sil.EndsAt.Equal(best.EndsAt) && sil.ID < best.ID {
			best = sil
		}
	}
	if best == nil {
		return "", nil
	}
	return best.ID, nil
}

// caught is one record of a silenced alert.
type caught struct {
	// ID is the record's stream id.
	ID          string            `json:"id"`
	SilenceID   string            `json:"silence_id"`
	At          time.Time         `json:"at"`
	Title       string            `json:"title"`
	Fingerprint string            `json:"fingerprint,omitempty"`
	Source      string            `json:"source,omitempty"`
	Severity    string            `json:"severity"`
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// Record implements alerts.Silencer: it appends each caught alert to the
// capped stream of silenced alerts, in one round trip.
func (s *Store) Record(ctx context.Context, caught []alerts.SilencedAlert, now time.Time) error {
	if len(caught) == 0 {
		return nil
	}
	at := now.UTC().Format(time.RFC3339Nano)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range caught {
			labels := ""
			if len(c.Alert.Labels) > 0 {
				b, _ := json.Marshal(c.Alert.Labels)
				labels = string(b)
			}
			p.XAdd(ctx, &redis.XAddArgs{
				Stream: keys.Silenced(), MaxLen: s.cfg.MaxRecorded, Approx: true,
				Values: []any{"silence_id", c.SilencedBy, "at", at, "title", c.Alert.Title, "fingerprint", c.Alert.Fingerprint,
					"source", c.Alert.Source, "severity", string(c.Alert.Severity), "status", string(c.Alert.Status), "labels", labels},
			})
		}
		return nil
	})
	durable.Wrote(ctx, keys.Silenced())
	if err != nil {
		return unavailable("record silenced alerts", err)
	}
	for _, c := range caught {
		s.cfg.Logger.Debug("alert silenced", "silence", c.SilencedBy, "title", c.Alert.Title, "fingerprint", c.Alert.Fingerprint)
	}
	return nil
}

// recordedPage is how many stream entries one read of Recorded takes.
const recordedPage = 500

// Recorded returns up to limit alerts that the silence id caught, newest
// first, from the capped stream (older ones may have been trimmed).
func (s *Store) Recorded(ctx context.Context, id string, limit int) ([]caught, error) {
	out := []caught{}
	end := "+"
	for len(out) < limit {
		msgs, err := s.rdb.XRevRangeN(ctx, keys.Silenced(), end, "-", recordedPage).Result()
		if err != nil {
			return nil, unavailable("read silenced alerts", err)
		}
		for _, m := range msgs {
			if str(m.Values["silence_id"]) != id {
				continue
			}
			out = append(out, caughtOf(m))
			if len(out) == limit {
				break
			}
		}
		if len(msgs) < recordedPage {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// caughtOf reads one stream entry.
func caughtOf(m redis.XMessage) caught {
	c := caught{ID: m.ID, SilenceID: str(m.Values["silence_id"]), Title: str(m.Values["title"]),
		Fingerprint: str(m.Values["fingerprint"]), Source: str(m.Values["source"]),
		Severity: str(m.Values["severity"]), Status: str(m.Values["status"])}
	c.At, _ = time.Parse(time.RFC3339Nano, str(m.Values["at"]))
	if l := str(m.Values["labels"]); l != "" {
		_ = json.Unmarshal([]byte(l), &c.Labels)
	}
	return c
}
