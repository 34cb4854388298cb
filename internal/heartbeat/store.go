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
	Interval   string   `json:"interval"`
	Schedule   string   `json:"schedule"`
	TZ         string   `json:"tz"`
	Grace      string   `json:"grace"`
	GraceEff   string   `json:"grace_eff"`
	MaxRun     string   `json:"max_run"`
	Severity   string   `json:"severity"`
	Labels     labelMap `json:"labels"`
	State      string   `json:"state"`
	Created    string   `json:"created"`
	LastPing   string   `json:"last_ping"`
	Deadline   string   `json:"deadline"`
	Started    string   `json:"started"`
	LastRun    string   `json:"last_run"`
	DownSince  string   `json:"down_since"`
	DownReason string   `json:"down_reason"`
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
	Name string `json:"n"`
	Kind string `json:"k"`
	// LastPing names the outage: the last ping before it, or the
	// heartbeat's creation when NeverPinged is "1".
	LastPing    string   `json:"t"`
	NeverPinged string   `json:"np"`
	At          string   `json:"at"`
	Deadline    string   `json:"dl"`
	DownSince   string   `json:"ds"`
	Reason      string   `json:"r"`
	Detail      string   `json:"d"`
	Started     string   `json:"st"`
	RunTime     string   `json:"rt"`
	MaxRun      string   `json:"mr"`
	Interval    string   `json:"i"`
	Schedule    string   `json:"sc"`
	TZ          string   `json:"tz"`
	Grace       string   `json:"g"`
	Severity    string   `json:"s"`
	Labels      labelMap `json:"l"`

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

// Why a heartbeat went down (record.DownReason, notification.Reason; an
// empty reason is an overdue one).
const (
	reasonOverdue    = "overdue"
	reasonRunTimeout = "run_timeout"
	reasonFail       = "fail"
)

// Signals a job sends.
const (
	sigPing  = "ping"
	sigStart = "start"
	sigFail  = "fail"
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

// clock is the last argument of every script that reads the clock: "" for
// Redis's TIME, or the test clock's time.
func (s *store) clock() string {
	if s.cfg.now == nil {
		return ""
	}
	return strconv.FormatInt(s.cfg.now().UnixMicro(), 10)
}

var hbKeys = []string{keys.HeartbeatRecords(), keys.HeartbeatDeadlines(), keys.HeartbeatOutbox()}

// errIntervalRequired is returned by ping for a new heartbeat without an
// interval or a schedule.
var errIntervalRequired = errors.New("the first ping of a heartbeat must declare its interval or schedule")

// errNoNextRun is returned by ping for a scheduled heartbeat whose
// schedule no longer fires.
var errNoNextRun = errors.New("the heartbeat's schedule has no next run")

// maxScheduleRounds bounds the calls of the ping script for one signal of
// a scheduled heartbeat: the first learns the schedule and Redis's time,
// the second normally succeeds, more are needed only when a concurrent
// signal changes the schedule in between.
const maxScheduleRounds = 4

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

// signalOpts is the JSON object of the ping script's options (see
// pingScript).
type signalOpts struct {
	Sig      string   `json:"sig"`
	Schedule string   `json:"sc"`
	TZ       string   `json:"tz"`
	MaxRun   string   `json:"mr"`
	Detail   string   `json:"d"`
	Key      string   `json:"key"`
	From     string   `json:"from"`
	Cands    []string `json:"cands"`
}

// signal records a signal (sigPing, sigStart or sigFail, with a fail's
// detail) of name with the declared settings (zero values keep the stored
// ones).
func (s *store) signal(ctx context.Context, name, sig string, p pingSettings, detail string) (pingResult, error) {
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
	opts := signalOpts{Sig: sig, Detail: detail, Cands: []string{}}
	if p.Schedule != nil {
		opts.Schedule, opts.TZ = p.Schedule.expr, p.Schedule.tz
	}
	if p.MaxRun != nil {
		opts.MaxRun = usArg(*p.MaxRun) // "0": back to the grace
	}
	var res []any
	for round := 1; ; round++ {
		b, err := json.Marshal(opts)
		if err != nil {
			return pingResult{}, err
		}
		res, err = pingScript.Run(ctx, s.rdb, hbKeys, name, interval, grace, string(p.Severity), labels,
			usArg(s.cfg.lease()), strconv.FormatFloat(s.cfg.DefaultGraceFraction, 'f', -1, 64),
			usArg(s.cfg.MinDefaultGrace), string(s.cfg.DefaultSeverity), strconv.Itoa(s.cfg.MaxHeartbeats),
			string(b), s.clock()).Slice()
		if err != nil {
			return pingResult{}, err
		}
		if len(res) != 4 || str(res[0]) != "3" {
			break
		}
		// A scheduled heartbeat: compute the schedule's next times from
		// the script's clock and run it again.
		if round == maxScheduleRounds {
			return pingResult{}, fmt.Errorf("heartbeat %q: its schedule changed under %d signals in a row", name, round)
		}
		if err := reschedule(name, res, &opts); err != nil {
			return pingResult{}, err
		}
	}
	return decodePing(res)
}

// reschedule fills opts with the next run times of the schedule that the
// ping script answered with ("3", from, expression, time zone), for the
// script's next round.
func reschedule(name string, res []any, opts *signalOpts) error {
	from, expr, tz := str(res[1]), str(res[2]), str(res[3])
	sc, problems := parseSchedule(expr, tz, usTime(from))
	if sc == nil {
		if _, ok := problems["time_zone"]; ok {
			// Another replica stored a zone this one cannot load.
			return fmt.Errorf("heartbeat %q: time zone %q: %s", name, tz, problems["time_zone"])
		}
		return errNoNextRun
	}
	opts.Key, opts.From, opts.Cands = scheduleKey(expr, tz), from, opts.Cands[:0]
	for _, c := range sc.candidates(usTime(from), scheduleCandidates) {
		opts.Cands = append(opts.Cands, strconv.FormatInt(c.UnixMicro(), 10))
	}
	if len(opts.Cands) < 2 {
		return errNoNextRun
	}
	return nil
}

// decodePing reads the ping script's final answer: the stored record,
// whether the signal created it, the script's clock, the notifications'
// lease and the notifications it claimed; or the refusal of a single code
// (too many heartbeats, or an interval required).
func decodePing(res []any) (pingResult, error) {
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
	res, err := checkScript.Run(ctx, s.rdb, hbKeys, usArg(s.cfg.lease()), s.cfg.BatchSize, s.clock()).Slice()
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
	until, err := handoverScript.Run(ctx, s.rdb, hbKeys[2:], n.raw, n.lease, usArg(s.cfg.lease()), s.clock()).Text()
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
	res, err := readScript.Run(ctx, s.rdb, hbKeys[:1], name, s.clock()).Slice()
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
	// the next check will declare it down) or "down" (the alert has been
	// raised; the next success ping recovers it).
	State string `json:"state"`
	// DownReason says why it is down: "overdue" (no ping by the deadline),
	// "run_timeout" (a run announced by /start did not finish in time) or
	// "fail" (the job reported a failure).
	DownReason string `json:"down_reason,omitempty"`
	// Interval is the declared interval of an interval heartbeat; Schedule
	// and TimeZone are the cron schedule of a scheduled one.
	Interval string `json:"interval,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	TimeZone string `json:"time_zone,omitempty"`
	// Grace is the grace in force and GraceDefault whether it is the
	// configured default.
	Grace        string `json:"grace"`
	GraceDefault bool   `json:"grace_default"`
	// MaxRunTime is the declared limit of a run from /start; empty means
	// the grace.
	MaxRunTime string `json:"max_run_time,omitempty"`
	// Severity and Labels are given to the heartbeat's alerts.
	Severity alerts.Severity   `json:"severity"`
	Labels   map[string]string `json:"labels,omitempty"`
	// Created is the first signal, LastPing the latest success ping
	// (absent before the first one); Redis's clock.
	Created  time.Time `json:"created"`
	LastPing time.Time `json:"last_ping,omitzero"`
	// Deadline is when the heartbeat becomes (or became) overdue: the
	// last ping plus interval plus grace, or the schedule's next time
	// after the last ping plus grace; while a run that started in time is
	// in progress, its start plus max_run_time (or grace).
	Deadline time.Time `json:"deadline"`
	// Started is when the run in progress started (/start).
	Started *time.Time `json:"started,omitempty"`
	// LastRun is how long the last finished run took, from its /start to
	// the success ping or /fail that ended it.
	LastRun string `json:"last_run,omitempty"`
	// DownSince is when it went down, while it is down.
	DownSince *time.Time `json:"down_since,omitempty"`
}

func (r record) view(name string, now time.Time) Heartbeat {
	h := Heartbeat{
		Name:         name,
		State:        r.State,
		Schedule:     r.Schedule,
		TimeZone:     r.TZ,
		Grace:        usDuration(r.GraceEff).String(),
		GraceDefault: r.Grace == "",
		Severity:     alerts.Severity(r.Severity),
		Labels:       r.Labels,
		Created:      usTime(r.Created),
		LastPing:     usTime(r.LastPing),
		Deadline:     usTime(r.Deadline),
	}
	if r.Interval != "" {
		h.Interval = usDuration(r.Interval).String()
	}
	if r.MaxRun != "" {
		h.MaxRunTime = usDuration(r.MaxRun).String()
	}
	if r.Started != "" {
		t := usTime(r.Started)
		h.Started = &t
	}
	if r.LastRun != "" {
		h.LastRun = usDuration(r.LastRun).Round(time.Millisecond).String()
	}
	if h.State == "up" && now.After(h.Deadline) {
		h.State = "late"
	}
	if h.State == "down" {
		h.DownReason = r.DownReason
		if h.DownReason == "" {
			h.DownReason = reasonOverdue
		}
	}
	if r.DownSince != "" {
		t := usTime(r.DownSince)
		h.DownSince = &t
	}
	return h
}
