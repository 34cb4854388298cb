package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/keys"
)

// record is a heartbeat as stored (see scripts.go). Numbers are decimal
// strings of microseconds.
type record struct {
	Interval  string   `json:"interval"`
	Grace     string   `json:"grace"`
	GraceEff  string   `json:"grace_eff"`
	Severity  string   `json:"severity"`
	Labels    labelMap `json:"labels"`
	State     string   `json:"state"`
	Created   string   `json:"created"`
	LastPing  string   `json:"last_ping"`
	Deadline  string   `json:"deadline"`
	DownSince string   `json:"down_since"`
}

// labelMap decodes a JSON object of strings, and also the empty array that
// Lua's cjson writes for an empty table.
type labelMap map[string]string

// UnmarshalJSON accepts an object of strings, [] and null.
func (m *labelMap) UnmarshalJSON(b []byte) error {
	if s := string(b); s == "[]" || s == "null" {
		*m = nil
		return nil
	}
	var v map[string]string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = v
	return nil
}

// notification is an outbox member: a heartbeat going down or coming back.
type notification struct {
	Name      string   `json:"n"`
	Kind      string   `json:"k"`
	LastPing  string   `json:"t"`
	At        string   `json:"at"`
	Deadline  string   `json:"dl"`
	DownSince string   `json:"ds"`
	Interval  string   `json:"i"`
	Grace     string   `json:"g"`
	Severity  string   `json:"s"`
	Labels    labelMap `json:"l"`

	// raw is the member exactly as stored, to remove or release it.
	raw string
	// lease is the caller's lease end (its score in the outbox, µs) while
	// the notification is claimed.
	lease string
}

// Notification kinds.
const (
	kindDown = "down"
	kindUp   = "up"
)

func decodeNotification(raw string) (notification, error) {
	var n notification
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		return n, fmt.Errorf("decode heartbeat notification %q: %w", raw, err)
	}
	n.raw = raw
	return n, nil
}

// usTime converts a stored microsecond timestamp; "" or garbage gives the
// zero time.
func usTime(s string) time.Time {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

// usDuration converts a stored microsecond duration.
func usDuration(s string) time.Duration {
	v, _ := strconv.ParseInt(s, 10, 64)
	return time.Duration(v) * time.Microsecond
}

func usArg(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }

// store runs the scripts against one Redis client.
type store struct {
	rdb redis.UniversalClient
	cfg Config
}

var hbKeys = []string{keys.HeartbeatRecords(), keys.HeartbeatDeadlines(), keys.HeartbeatOutbox()}

// errIntervalRequired is returned by ping for a new heartbeat without an
// interval.
var errIntervalRequired = errors.New("the first ping of a heartbeat must declare its interval")

// errTooMany is returned by ping for a new heartbeat when MaxHeartbeats
// exist already.
var errTooMany = errors.New("too many heartbeats")

// pingResult is what a recorded ping returns.
type pingResult struct {
	rec     record
	created bool
	now     time.Time
	// pending are notifications leased to the caller to dispatch: the
	// recovery, and older notifications of the heartbeat still waiting.
	pending []notification
}

// ping records a ping of name with the declared settings (zero values keep
// the stored ones).
func (s *store) ping(ctx context.Context, name string, p pingSettings) (pingResult, error) {
	var interval, grace, labels string
	if p.Interval > 0 {
		interval = usArg(p.Interval)
	}
	if p.Grace != nil {
		grace = usArg(*p.Grace)
	}
	if p.Labels != nil {
		b, err := json.Marshal(p.Labels)
		if err != nil {
			return pingResult{}, err
		}
		labels = string(b)
	}
	res, err := pingScript.Run(ctx, s.rdb, hbKeys, name, interval, grace, string(p.Severity), labels,
		usArg(s.cfg.lease()), strconv.FormatFloat(s.cfg.DefaultGraceFraction, 'f', -1, 64),
		usArg(s.cfg.MinDefaultGrace), string(s.cfg.DefaultSeverity), strconv.Itoa(s.cfg.MaxHeartbeats)).Slice()
	if err != nil {
		return pingResult{}, err
	}
	if len(res) == 1 {
		if str(res[0]) == "2" {
			return pingResult{}, errTooMany
		}
		return pingResult{}, errIntervalRequired
	}
	if len(res) < 5 {
		return pingResult{}, fmt.Errorf("ping script returned %d values", len(res))
	}
	var out pingResult
	if err := json.Unmarshal([]byte(str(res[1])), &out.rec); err != nil {
		return pingResult{}, fmt.Errorf("decode heartbeat record: %w", err)
	}
	out.created = str(res[2]) == "1"
	out.now = usTime(str(res[3]))
	lease := str(res[4])
	for _, v := range res[5:] {
		n, err := decodeNotification(str(v))
		if err != nil {
			return out, err
		}
		n.lease = lease
		out.pending = append(out.pending, n)
	}
	return out, nil
}

// check runs one check: it turns overdue heartbeats down and claims up to
// BatchSize due notifications.
func (s *store) check(ctx context.Context) (overdue int, claimed []notification, err error) {
	res, err := checkScript.Run(ctx, s.rdb, hbKeys, usArg(s.cfg.lease()), s.cfg.BatchSize).Slice()
	if err != nil {
		return 0, nil, err
	}
	if len(res) < 3 {
		return 0, nil, fmt.Errorf("check script returned %d values", len(res))
	}
	overdue, _ = strconv.Atoi(str(res[1]))
	lease := str(res[2])
	for _, v := range res[3:] {
		n, err := decodeNotification(str(v))
		if err != nil {
			// Not ours to understand: drop it rather than claim it forever.
			s.cfg.Logger.Error("dropping an undecodable heartbeat notification", "error", err)
			_ = s.rdb.ZRem(ctx, keys.HeartbeatOutbox(), str(v)).Err()
			continue
		}
		n.lease = lease
		claimed = append(claimed, n)
	}
	return overdue, claimed, nil
}

// handover confirms, right before the dispatch, that a claimed notification
// is still the caller's (not deleted with its heartbeat, not taken over by
// another replica after its lease ran out) and renews its lease for the
// dispatch. ok is false when it is no longer the caller's; then it must not
// be dispatched.
func (s *store) handover(ctx context.Context, n *notification) (ok bool, err error) {
	until, err := handoverScript.Run(ctx, s.rdb, hbKeys[2:], n.raw, n.lease, usArg(s.cfg.lease())).Text()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n.lease = until
	return true, nil
}

// done removes a dispatched notification from the outbox.
func (s *store) done(ctx context.Context, n notification) error {
	return s.rdb.ZRem(ctx, keys.HeartbeatOutbox(), n.raw).Err()
}

// release hands a claimed notification back, due at once, so the next check
// of any replica retries it. A notification removed meanwhile (delivered by
// another replica, or its heartbeat deleted) stays removed.
func (s *store) release(ctx context.Context, n notification) error {
	return s.rdb.ZAddXX(ctx, keys.HeartbeatOutbox(), redis.Z{Score: 0, Member: n.raw}).Err()
}

// remove stops watching name; it reports whether the heartbeat existed.
func (s *store) remove(ctx context.Context, name string) (bool, error) {
	n, err := deleteScript.Run(ctx, s.rdb, hbKeys, name).Int()
	return n == 1, err
}

// read returns the named heartbeat (or all of them when name is ""), sorted
// by name, with Redis's current time.
func (s *store) read(ctx context.Context, name string) (time.Time, []Heartbeat, error) {
	res, err := readScript.Run(ctx, s.rdb, hbKeys[:1], name).Slice()
	if err != nil {
		return time.Time{}, nil, err
	}
	if len(res) < 1 {
		return time.Time{}, nil, fmt.Errorf("read script returned no values")
	}
	now := usTime(str(res[0]))
	out := []Heartbeat{}
	for i := 1; i+1 < len(res); i += 2 {
		var rec record
		if err := json.Unmarshal([]byte(str(res[i+1])), &rec); err != nil {
			s.cfg.Logger.Error("skipping an undecodable heartbeat record", "heartbeat", str(res[i]), "error", err)
			continue
		}
		out = append(out, rec.view(str(res[i]), now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return now, out, nil
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// Heartbeat is a heartbeat as the API shows it.
type Heartbeat struct {
	// Name identifies the heartbeat.
	Name string `json:"name"`
	// State is "up" (pinged in time), "late" (the deadline has passed and
	// the next check will declare it down) or "down" (the overdue alert has
	// been raised; the next ping recovers it).
	State string `json:"state"`
	// Interval is the declared interval, Grace the grace in force and
	// GraceDefault whether it is the configured default.
	Interval     string `json:"interval"`
	Grace        string `json:"grace"`
	GraceDefault bool   `json:"grace_default"`
	// Severity and Labels are given to the heartbeat's alerts.
	Severity alerts.Severity   `json:"severity"`
	Labels   map[string]string `json:"labels,omitempty"`
	// Created is the first ping, LastPing the latest (Redis's clock).
	Created  time.Time `json:"created"`
	LastPing time.Time `json:"last_ping"`
	// Deadline is when the heartbeat becomes (or became) overdue: last ping
	// plus interval plus grace.
	Deadline time.Time `json:"deadline"`
	// DownSince is when the check found it overdue, while it is down.
	DownSince *time.Time `json:"down_since,omitempty"`
}

func (r record) view(name string, now time.Time) Heartbeat {
	h := Heartbeat{
		Name:         name,
		State:        r.State,
		Interval:     usDuration(r.Interval).String(),
		Grace:        usDuration(r.GraceEff).String(),
		GraceDefault: r.Grace == "",
		Severity:     alerts.Severity(r.Severity),
		Labels:       r.Labels,
		Created:      usTime(r.Created),
		LastPing:     usTime(r.LastPing),
		Deadline:     usTime(r.Deadline),
	}
	if h.State == "up" && now.After(h.Deadline) {
		h.State = "late"
	}
	if r.DownSince != "" {
		t := usTime(r.DownSince)
		h.DownSince = &t
	}
	return h
}
