package roster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/oncall"
)

// maxOverrides bounds the overrides of one schedule that have not ended.
const maxOverrides = 100

// ErrTooManyOverrides refuses an override when the schedule holds
// maxOverrides that have not ended.
var ErrTooManyOverrides = fmt.Errorf("roster: the schedule has %d overrides that have not ended; wait for some to end", maxOverrides)

// Overrides keeps the overrides made through the API, per schedule, in
// Redis: every producer and worker sees the same ones. They sit above
// the routing file's overrides, in the order they were made (the later
// wins where two overlap), and are dropped once they have ended.
type Overrides struct {
	rdb redis.UniversalClient
}

// NewOverrides returns the overrides kept in rdb.
func NewOverrides(rdb redis.UniversalClient) *Overrides { return &Overrides{rdb: rdb} }

// storedOverride is an override as it is kept: a JSON object in the
// schedule's list. E is its end in µs, which the script reads.
type storedOverride struct {
	User    userJSON  `json:"user"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	E       int64     `json:"e"`
	By      string    `json:"by,omitempty"`
	Created time.Time `json:"created"`
}

// userJSON is a user in JSON.
type userJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Username string `json:"username,omitempty"`
}

func toUserJSON(u oncall.User) userJSON {
	return userJSON{ID: u.ID, Name: u.Name, Username: u.Username}
}

func (u userJSON) user() oncall.User {
	return oncall.User{ID: u.ID, Name: u.Name, Username: u.Username}
}

// addOverrideScript appends an override to a schedule's list, dropping
// those that have ended, unless the list is full.
//
// KEYS[1] the schedule's list (keys.OnCallOverrides).
// ARGV[1] the override's JSON, ARGV[2] now µs, ARGV[3] the most overrides.
// Returns 1 when added, 0 when full.
var addOverrideScript = redis.NewScript(`
local live = {}
for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, o = pcall(cjson.decode, v)
  if ok and tonumber(o.e) > tonumber(ARGV[2]) then table.insert(live, v) end
end
if #live >= tonumber(ARGV[3]) then return 0 end
redis.call('DEL', KEYS[1])
for _, v in ipairs(live) do redis.call('RPUSH', KEYS[1], v) end
redis.call('RPUSH', KEYS[1], ARGV[1])
return 1
`)

// Add stores an override of the schedule, made by by at now. Errors wrap
// jobs.ErrUnavailable when Redis did not take it, or are
// ErrTooManyOverrides.
func (o *Overrides) Add(ctx context.Context, schedule string, ov oncall.Override, by string, now time.Time) error {
	if err := ov.Validate(); err != nil {
		return err
	}
	body, err := json.Marshal(storedOverride{User: toUserJSON(ov.User), Start: ov.Start.UTC(), End: ov.End.UTC(), E: ov.End.UnixMicro(), By: by, Created: now.UTC()})
	if err != nil {
		return err
	}
	key := keys.OnCallOverrides(schedule)
	n, err := addOverrideScript.Run(ctx, o.rdb, []string{key}, string(body), now.UnixMicro(), maxOverrides).Int()
	if err != nil {
		return fmt.Errorf("%w: roster: store the override: %w", jobs.ErrUnavailable, err)
	}
	durable.Wrote(ctx, key)
	if n == 0 {
		return ErrTooManyOverrides
	}
	return nil
}

// List returns the schedule's stored overrides, oldest first.
func (o *Overrides) List(ctx context.Context, schedule string) ([]oncall.Override, error) {
	raw, err := o.rdb.LRange(ctx, keys.OnCallOverrides(schedule), 0, -1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: roster: read the overrides of %q: %w", jobs.ErrUnavailable, schedule, err)
	}
	out := make([]oncall.Override, 0, len(raw))
	for _, v := range raw {
		var s storedOverride
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			continue // not one of ours: ignored rather than blocking the schedule
		}
		out = append(out, oncall.Override{User: s.User.user(), Start: s.Start, End: s.End})
	}
	return out, nil
}

// Live returns s with its stored overrides above the file's. A nil
// Overrides returns s as it is.
func (o *Overrides) Live(ctx context.Context, s oncall.Schedule) (oncall.Schedule, error) {
	if o == nil {
		return s, nil
	}
	extra, err := o.List(ctx, s.Name)
	if err != nil || len(extra) == 0 {
		return s, err
	}
	s.Overrides = append(slices.Clip(s.Overrides), extra...)
	return s, nil
}
