package silences

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// held is the record of a message held by quiet hours.
type held struct {
	// Queue is the queue its digest item goes to.
	Queue string `json:"queue"`
	// Item is the digest item, its id included.
	Item jobs.CoalescedItem `json:"item"`
	// Until is when it is released.
	Until time.Time `json:"until"`
	// HeldAt is when it was held.
	HeldAt time.Time `json:"held_at"`
}

// Hold implements alerts.Holder: it stores req, a request the Router has
// validated, until the end of its quiet hours, when the releaser (Start)
// puts it into its destination's digest group. The item's id is the task
// id of the message's idempotency key, or a fresh one; the key is claimed
// for the idempotency window, as an enqueue claims it, so a repeat within
// the window (held or not) is a duplicate. Messages for the critical queue
// are released into the default queue, since critical messages are never
// coalesced.
func (s *Store) Hold(ctx context.Context, req jobs.Request, until time.Time) (jobs.Result, error) {
	now := s.cfg.Now()
	msg := req.Message
	if err := msg.Normalize(jobs.Limits{MaxTextLen: 1 << 20}, now); err != nil {
		return jobs.Result{}, err
	}
	if msg.MaxRetry == nil {
		budget := s.cfg.MaxRetry
		msg.MaxRetry = &budget
	}
	queue := req.Queue
	if queue == "" || queue == jobs.QueueCritical {
		queue = jobs.QueueDefault
	}
	it := jobs.CoalescedItem{V: jobs.ItemPayloadVersion, Message: msg}
	if req.Item != nil {
		it.Item = *req.Item
		it.Item.Title = strings.TrimSpace(it.Item.Title)
	} else {
		it.Item = jobs.DeriveItem(msg)
	}
	claimTTL := int64(0)
	if msg.IdempotencyKey != "" {
		it.ID = jobs.IdempotencyID(msg.From, msg.IdempotencyKey)
		claimTTL = s.cfg.IdempotencyWindow.Milliseconds()
	} else {
		it.ID = uuid.NewString()
	}
	rec, err := json.Marshal(held{Queue: queue, Item: it, Until: until.UTC(), HeldAt: now.UTC()})
	if err != nil {
		return jobs.Result{}, fmt.Errorf("silences: encode held message: %w", err)
	}
	res, err := holdScript.Run(ctx, s.rdb, []string{keys.QuietHeld(), keys.QuietDue(), keys.Idempotency(it.ID)},
		it.ID, rec, ms(until), queue, claimTTL).Slice()
	durable.Wrote(ctx, keys.QuietHeld())
	if err != nil {
		return jobs.Result{}, unavailable("hold", err)
	}
	if n, _ := res[0].(int64); n == 0 {
		q := queue
		if len(res) > 1 {
			q, _ = res[1].(string)
		}
		return jobs.Result{TaskID: it.ID, Queue: q, Duplicate: true, Coalesced: true}, nil
	}
	s.noteDue(until, false)
	s.cfg.Logger.Debug("message held for quiet hours", "item", it.ID, "chat", msg.Chat, "until", until)
	return jobs.Result{TaskID: it.ID, Queue: queue, Coalesced: true}, nil
}

// Release puts the held messages whose quiet hours are over into their
// digest groups and returns how many it released. Each is leased to this
// call (Config.ReleaseLease) while it is enqueued, and deleted after; a
// message whose enqueue fails stays and is tried again when the lease
// ends.
func (s *Store) Release(ctx context.Context) (int, error) {
	released := 0
	for {
		now := s.cfg.Now()
		flat, next, err := s.take(ctx, now)
		if err != nil {
			s.forgetDue()
			return released, unavailable("take held messages", err)
		}
		s.noteDue(next, true)
		if len(flat) == 0 {
			return released, nil
		}
		var done []string
		var firstErr error
		for i := 0; i+1 < len(flat); i += 2 {
			id, raw := flat[i], flat[i+1]
			var h held
			if err := json.Unmarshal([]byte(raw), &h); err != nil || h.Item.ID != id {
				// Nothing can deliver it; drop it loudly rather than retry forever.
				s.cfg.Logger.Error("dropping an unreadable held message", "item", id, "error", err)
				done = append(done, id)
				continue
			}
			res, err := s.cfg.Items.EnqueueItem(ctx, h.Queue, h.Item)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				s.cfg.Logger.Warn("held message not released; retrying after the lease", "item", id, "lease", s.cfg.ReleaseLease, "error", err)
				continue
			}
			done = append(done, id)
			s.cfg.Logger.Debug("held message released", "item", id, "queue", res.Queue, "duplicate", res.Duplicate, "held_until", h.Until)
		}
		if len(done) > 0 {
			if err := s.forget(ctx, done); err != nil {
				// Enqueued but still held: released again after the lease,
				// where the item id makes it a duplicate.
				s.forgetDue()
				return released, err
			}
			released += len(done)
		}
		if firstErr != nil {
			// What failed is tried again when its lease ends: look at
			// every interval until then.
			s.forgetDue()
			return released, firstErr
		}
		if len(flat)/2 < s.cfg.ReleaseBatch {
			return released, nil
		}
	}
}

// take runs takeScript: the held messages it leased (id, record, ...) and
// when the next one is due (zero when none is held).
func (s *Store) take(ctx context.Context, now time.Time) (flat []string, next time.Time, err error) {
	res, err := takeScript.Run(ctx, s.rdb, []string{keys.QuietHeld(), keys.QuietDue()},
		ms(now), ms(now.Add(s.cfg.ReleaseLease)), s.cfg.ReleaseBatch).Slice()
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(res) != 2 {
		return nil, time.Time{}, fmt.Errorf("unexpected reply %v", res)
	}
	items, _ := res[0].([]any)
	for _, v := range items {
		str, _ := v.(string)
		flat = append(flat, str)
	}
	if at, _ := res[1].(string); at != "" {
		f, err := strconv.ParseFloat(at, 64)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("unexpected due time %q", at)
		}
		next = time.UnixMilli(int64(f))
	}
	return flat, next, nil
}

// forget deletes released messages, in one MULTI.
func (s *Store) forget(ctx context.Context, ids []string) error {
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, keys.QuietHeld(), ids...)
		p.ZRem(ctx, keys.QuietDue(), members...)
		return nil
	})
	if err != nil {
		return unavailable("forget released messages", err)
	}
	return nil
}
