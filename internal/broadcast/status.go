package broadcast

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/ratelimit"
)

// Status is what GET /v1/broadcasts/{id} says of a broadcast.
type Status struct {
	ID    string `json:"id"`
	Bot   string `json:"bot"`
	From  string `json:"from,omitempty"`
	Queue string `json:"queue"`
	// State is "storing" while the request that creates it has not
	// stored every message (it stopped half-way: send it again with its
	// idempotency key), "sending" while messages are on their way, and
	// "done" once every one is settled.
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	// Chats is the number of chats, those left out as blocked included.
	Chats int `json:"chats"`
	Counts
	// ChargedSends counts its sends that Telegram charges for (paid
	// sends beyond the free rate, as the worker counts them in
	// keys.Space.BroadcastCharged); Stars is what they cost.
	ChargedSends int64   `json:"charged_sends"`
	Stars        float64 `json:"stars"`
	// ETA is when the messages still queued will have gone at the bot's
	// rate (HERALD_LIMIT_BOT) and, for texts that go out in several
	// parts, the chats' spacing (HERALD_LIMIT_PRIVATE); other traffic of
	// the bot comes on top. Absent when nothing is left or nothing bounds
	// the rate.
	ETA        *time.Time `json:"eta,omitempty"`
	ETASeconds *float64   `json:"eta_seconds,omitempty"`
}

// Counts tell where a broadcast's messages are; together they add up to
// Status.Chats. Each comes from the message's ledger record, which the
// worker writes when it settles it, so it holds after any crash.
type Counts struct {
	// Queued: not settled yet (waiting, scheduled, retrying, sending).
	Queued int `json:"queued"`
	Sent   int `json:"sent"`
	// Failed: archived for a reason other than a blocked chat.
	Failed int `json:"failed"`
	// Blocked: left out because the chat had blocked the bot, or failed
	// because it did meanwhile.
	Blocked   int `json:"blocked"`
	Cancelled int `json:"cancelled"`
	// Cancelling: cancelled but not yet settled; a worker settles each as
	// cancelled when it reaches it, without sending it.
	Cancelling int `json:"cancelling"`
	// Other: settled in another way (none of a broadcast's messages is
	// expected to be silenced or coalesced).
	Other int `json:"other,omitempty"`
}

// The states of Status.State beyond the record's "storing".
const (
	statusSending = "sending"
	statusDone    = "done"
)

// scanChunk is how many messages one MGET of scan reads (two keys each).
const scanChunk = 500

// Status returns what became of broadcast id's messages. may, when set,
// decides from the broadcast's sender whether the caller may see it; a
// broadcast it refuses is ErrNotFound. A broadcast whose messages the
// ledger counts (record.Counted) is read in a fixed number of commands
// whatever its size: its record, its counts and charged sends (one round
// trip), and its bot's pacing while messages are left.
func (s *Service) Status(ctx context.Context, id string, may func(from string) bool) (Status, error) {
	rec, err := s.load(ctx, id, may)
	if err != nil {
		return Status{}, err
	}
	if rec.Counted {
		return s.counted(ctx, rec)
	}
	list, err := s.store.chats(ctx, id)
	if err != nil {
		return Status{}, unavailable(err)
	}
	c, _, err := s.scan(ctx, rec, list)
	if err != nil {
		return Status{}, err
	}
	charged, err := s.rdb.Get(ctx, keys.Bot(rec.Bot).BroadcastCharged(rec.ID)).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Status{}, unavailable(fmt.Errorf("read the charged sends of broadcast %s: %w", rec.ID, err))
	}
	return s.status(ctx, rec, len(list), c, charged)
}

// counted is the status of rec from its counts hash, which the ledger
// keeps (keys.Space.BroadcastCounts): the chats left out as blocked come
// from the record, the messages not counted as settled or cancelling are
// queued.
func (s *Service) counted(ctx context.Context, rec record) (Status, error) {
	ks := keys.Bot(rec.Bot)
	var counts *redis.MapStringStringCmd
	var charged *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		counts = p.HGetAll(ctx, ks.BroadcastCounts(rec.ID))
		charged = p.Get(ctx, ks.BroadcastCharged(rec.ID))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Status{}, unavailable(fmt.Errorf("read the counts of broadcast %s: %w", rec.ID, err))
	}
	h := counts.Val()
	n := func(field string) int { v, _ := strconv.Atoi(h[field]); return v }
	c := Counts{Sent: n(ledger.CountSent), Failed: n(ledger.CountFailed), Blocked: n(ledger.CountBlocked),
		Cancelled: n(ledger.CountCancelled), Cancelling: n(ledger.CountCancelling), Other: n(ledger.CountOther)}
	c.Queued = max(rec.Chats-(c.Sent+c.Failed+c.Blocked+c.Cancelled+c.Cancelling+c.Other), 0)
	c.Blocked += rec.Blocked
	ch, _ := charged.Int64()
	return s.status(ctx, rec, rec.Chats+rec.Blocked, c, ch)
}

// load reads id's record, as may allows.
func (s *Service) load(ctx context.Context, id string, may func(from string) bool) (record, error) {
	rec, err := s.store.load(ctx, id)
	if err == nil && may != nil && !may(rec.From) {
		err = errNoRecord
	}
	switch {
	case errors.Is(err, errNoRecord):
		return record{}, ErrNotFound
	case err != nil:
		return record{}, unavailable(err)
	}
	return rec, nil
}

// taskIDs are the task ids of rec's messages, whose chats are list (the
// chats left out as blocked have none).
func taskIDs(rec record, list []string) []string {
	ids := make([]string, 0, len(list))
	for _, e := range list {
		if !strings.HasPrefix(e, skippedMark) {
			ids = append(ids, TaskID(rec.ID, e))
		}
	}
	return ids
}

// scan counts the messages of rec, whose chats are list, from their
// ledger records and cancel marks, and returns the task ids of those
// neither settled nor marked cancelled (open).
func (s *Service) scan(ctx context.Context, rec record, list []string) (c Counts, open []string, err error) {
	ks := keys.Bot(rec.Bot)
	ids := taskIDs(rec, list)
	c.Blocked = len(list) - len(ids)
	cmds := make([]*redis.SliceCmd, 0, len(ids)/scanChunk+1)
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for start := 0; start < len(ids); start += scanChunk {
			part := ids[start:min(start+scanChunk, len(ids))]
			names := make([]string, 0, 2*len(part))
			for _, id := range part {
				names = append(names, ks.Sent(id), ks.Cancel(id))
			}
			cmds = append(cmds, p.MGet(ctx, names...))
		}
		return nil
	})
	if err != nil {
		return Counts{}, nil, unavailable(fmt.Errorf("read the records of broadcast %s: %w", rec.ID, err))
	}
	i := 0
	for _, cmd := range cmds {
		vals := cmd.Val()
		for j := 0; j+1 < len(vals); j, i = j+2, i+1 {
			if c.count(vals[j], vals[j+1]) {
				open = append(open, ids[i])
			}
		}
	}
	return c, open, nil
}

// count adds one message, whose send record and cancel mark are record
// and mark (nil: none), and reports whether it is open: on its way and
// not marked cancelled.
func (c *Counts) count(rec, mark any) bool {
	v, _ := rec.(string)
	if r, ok := settledState(v); ok {
		switch {
		case r.State == ledger.StateSent:
			c.Sent++
		case r.State == ledger.StateFailed && r.Reason == ledger.ReasonChatBlocked:
			c.Blocked++
		case r.State == ledger.StateFailed:
			c.Failed++
		case r.State == ledger.StateCancelled:
			c.Cancelled++
		default:
			c.Other++
		}
		return false
	}
	if mark != nil {
		c.Cancelling++
		return false
	}
	c.Queued++
	return true
}

// sentPrefix starts the record of a sent message (ledger.Record encodes
// its state first): most of a broadcast's records, read without decoding
// them.
const sentPrefix = `{"s":"` + string(ledger.StateSent) + `"`

// settledState reads a send record: the ledger's record of a settled
// message, or false for a message still on its way (no record, or the
// worker's progress).
func settledState(v string) (ledger.Record, bool) {
	if strings.HasPrefix(v, sentPrefix) {
		return ledger.Record{State: ledger.StateSent}, true
	}
	return ledger.Decode(v)
}

// status assembles the Status of rec, of chats chats, from its counts and
// charged sends, with its ETA.
func (s *Service) status(ctx context.Context, rec record, chats int, c Counts, charged int64) (Status, error) {
	st := Status{ID: rec.ID, Bot: rec.Bot, From: rec.From, Queue: rec.Queue, State: rec.State,
		CreatedAt: time.UnixMilli(rec.Created).UTC(), Chats: chats, Counts: c}
	st.ChargedSends, st.Stars = charged, float64(charged)*ratelimit.StarsPerCharged
	if rec.State == stateStored {
		st.State = statusDone
		if c.Queued+c.Cancelling > 0 {
			st.State = statusSending
		}
	}
	if c.Queued == 0 {
		return st, nil
	}
	rate, err := s.rate(ctx, rec)
	if err != nil {
		return Status{}, unavailable(err)
	}
	if secs, ok := s.eta(c.Queued, max(rec.Parts, 1), rate); ok {
		at := time.Now().Add(time.Duration(secs * float64(time.Second))).UTC().Truncate(time.Second)
		st.ETA, st.ETASeconds = &at, &secs
	}
	return st, nil
}

// rate is the sends per second the broadcast's queue gets from its bot:
// the pacing the bot's workers published (the paid limit while paid
// broadcasts are on, the lane's share), or this process's HERALD_LIMIT_BOT
// before any worker has published one.
func (s *Service) rate(ctx context.Context, rec record) (float64, error) {
	p, ok, err := ratelimit.ReadPacing(ctx, s.rdb, rec.Bot)
	if err != nil {
		return 0, err
	}
	if !ok {
		return s.cfg.BotLimit.Rate(), nil
	}
	return p.Rate(rec.Queue), nil
}

// eta is the time, in seconds, that left messages of parts parts each
// need at rate sends a second, and no less than the chat spacing between
// one message's parts.
func (s *Service) eta(left, parts int, rate float64) (float64, bool) {
	if left == 0 || rate <= 0 {
		return 0, false
	}
	secs := float64(left*parts) / rate
	secs = max(secs, (time.Duration(parts-1) * s.cfg.ChatLimit.Spacing()).Seconds())
	return float64(int64(secs*10)) / 10, true
}
