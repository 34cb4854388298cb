package escalation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// Retention is how long an escalation is remembered after its last
// change: as long as the alert's thread (jobs.ThreadRetention).
const Retention = jobs.ThreadRetention

// Store keeps escalations in Redis. The router begins and stops them
// (Begin, Resolve), the worker's press handler acknowledges them
// (Acknowledge), and the Engine takes their steps.
type Store struct {
	rdb     redis.UniversalClient
	metrics *Metrics
	// clock replaces Redis's TIME in the scripts (tests): unix µs.
	clock func() int64
}

// clockArg is the scripts' clock argument: "" for Redis's TIME.
func (s *Store) clockArg() string {
	if s.clock == nil {
		return ""
	}
	return strconv.FormatInt(s.clock(), 10)
}

// NewStore returns a store on rdb; metrics count the acknowledgements
// (nil: unregistered ones).
func NewStore(rdb redis.UniversalClient, metrics *Metrics) *Store {
	return &Store{rdb: rdb, metrics: metrics.orNew()}
}

// Begin starts the escalation of a firing alert, unless the alert has one
// already (it fired before and has not resolved): started reports whether
// this call started it. Its first step is due at once. An error wraps
// jobs.ErrUnavailable.
func (s *Store) Begin(ctx context.Context, st Start) (started bool, err error) {
	if st.Policy == "" || len(st.Homes) == 0 {
		return false, errors.New("escalation: Begin needs a policy and at least one home")
	}
	fields, err := st.fields()
	if err != nil {
		return false, err
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return false, err
	}
	id := idOf(st.Bot, st.Route, st.Identity)
	ks := append([]string{keys.Escalation(id), keys.EscalationsDue()}, homeKeys(st.Bot, st.Homes)...)
	n, err := beginScript.Run(ctx, s.rdb, ks, id, Retention.Milliseconds(), string(body), position{Phase: phaseNotify}.encode(), s.clockArg()).Int()
	if err != nil {
		return false, fmt.Errorf("%w: escalation: begin: %w", jobs.ErrUnavailable, err)
	}
	for _, k := range ks {
		durable.Wrote(ctx, k)
	}
	return n == 1, nil
}

// Resolve forgets the escalation of an alert that resolved. An error
// wraps jobs.ErrUnavailable.
func (s *Store) Resolve(ctx context.Context, st Stop) error {
	id := idOf(st.Bot, st.Route, st.Identity)
	ks := append([]string{keys.Escalation(id), keys.EscalationsDue()}, homeKeys(st.Bot, st.Homes)...)
	if err := resolveScript.Run(ctx, s.rdb, ks, id).Err(); err != nil {
		return fmt.Errorf("%w: escalation: resolve: %w", jobs.ErrUnavailable, err)
	}
	for _, k := range ks {
		durable.Wrote(ctx, k)
	}
	return nil
}

// Ack is an acknowledgement of an alert's message.
type Ack struct {
	// Bot, Chat and Thread are the message's bot, chat and thread key.
	Bot, Chat, Thread string
	// By names who acknowledged; At is when.
	By string
	At time.Time
}

// Acked is what Acknowledge found.
type Acked struct {
	// Escalated is set when the message belongs to an escalation; then
	// FiredAt is when its alert fired and Policy its policy.
	Escalated bool
	FiredAt   time.Time
	Policy    string
	// First is set when this call acknowledged the escalation (an earlier
	// acknowledgement stopped it otherwise).
	First bool
}

// Acknowledge stops the escalation of the alert whose message was
// acknowledged, once: the first call for it observes
// herald_time_to_acknowledge_seconds. A message of no escalation gives a
// zero Acked.
func (s *Store) Acknowledge(ctx context.Context, a Ack) (Acked, error) {
	id, err := s.rdb.Get(ctx, keys.EscalationHome(a.Bot, a.Chat, a.Thread)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Acked{}, nil
	case err != nil:
		return Acked{}, fmt.Errorf("escalation: find the escalation of the message: %w", err)
	}
	res, err := ackScript.Run(ctx, s.rdb, []string{keys.Escalation(id), keys.EscalationsDue()}, id, a.By, a.At.UnixMicro()).Slice()
	if err != nil {
		return Acked{}, fmt.Errorf("escalation: acknowledge: %w", err)
	}
	durable.Wrote(ctx, keys.Escalation(id))
	if len(res) == 0 || res[0] == int64(0) {
		return Acked{}, nil
	}
	if res[0] == int64(2) || len(res) < 3 {
		return Acked{Escalated: true}, nil
	}
	out := Acked{Escalated: true, First: true}
	if f, ok := res[1].(string); ok {
		if us, err := strconv.ParseInt(f, 10, 64); err == nil {
			out.FiredAt = time.UnixMicro(us)
		}
	}
	out.Policy, _ = res[2].(string)
	if !out.FiredAt.IsZero() {
		s.metrics.TimeToAck.WithLabelValues(out.Policy).Observe(max(a.At.Sub(out.FiredAt), 0).Seconds())
	}
	return out, nil
}

// homeKeys are the keys of homes' index entries.
func homeKeys(bot string, homes []Home) []string {
	out := make([]string, 0, len(homes))
	for _, h := range homes {
		out = append(out, keys.EscalationHome(bot, h.Chat, h.Thread))
	}
	return out
}

// claim leases up to n due escalations; now and until are Redis's clock
// and the lease's end.
func (s *Store) claim(ctx context.Context, lease time.Duration, n int) (now, until int64, ids []string, err error) {
	res, err := claimScript.Run(ctx, s.rdb, []string{keys.EscalationsDue()}, lease.Microseconds(), n, s.clockArg()).StringSlice()
	if err != nil {
		return 0, 0, nil, fmt.Errorf("escalation: claim: %w", err)
	}
	if len(res) < 2 {
		return 0, 0, nil, fmt.Errorf("escalation: claim: unexpected reply %v", res)
	}
	now, err1 := strconv.ParseInt(res[0], 10, 64)
	until, err2 := strconv.ParseInt(res[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, nil, fmt.Errorf("escalation: claim: %w", err)
	}
	return now, until, res[2:], nil
}

// load reads the records of ids, in one pipeline; a missing one is left
// out of the map.
func (s *Store) load(ctx context.Context, ids []string) (map[string]record, error) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, keys.Escalation(id))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("escalation: load: %w", err)
	}
	out := make(map[string]record, len(ids))
	for i, id := range ids {
		r, ok, err := decodeRecord(id, cmds[i].Val())
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = r
		}
	}
	return out, nil
}

// advance moves r from the position it was read at to next, in state,
// due at due (µs; 0: never again). moved is false when the lease or the
// position was no longer the caller's, or the escalation is over.
func (s *Store) advance(ctx context.Context, r record, lease int64, next position, state string, due int64) (moved bool, err error) {
	d := ""
	if due > 0 {
		d = strconv.FormatInt(due, 10)
	}
	n, err := advanceScript.Run(ctx, s.rdb, []string{keys.Escalation(r.ID), keys.EscalationsDue()},
		r.ID, lease, r.rawPos, next.encode(), state, d, Retention.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("escalation: advance: %w", err)
	}
	return n == 1, nil
}

// drop takes an id whose record is gone out of the due set.
func (s *Store) drop(ctx context.Context, id string) error {
	return s.rdb.ZRem(ctx, keys.EscalationsDue(), id).Err()
}
