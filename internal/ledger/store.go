package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Store reads and writes message records.
type Store struct {
	rdb       redis.UniversalClient
	retention time.Duration
}

// NewStore returns a store on rdb; cfg's defaults are filled in.
func NewStore(rdb redis.UniversalClient, cfg Config) *Store {
	return &Store{rdb: rdb, retention: cfg.WithDefaults().Retention}
}

// Retention is how long a record is kept.
func (s *Store) Retention() time.Duration { return s.retention }

// Get returns the record of the bot's message taskID; false when the
// message is not settled (or not known).
func (s *Store) Get(ctx context.Context, bot, taskID string) (Record, bool, error) {
	v, err := s.rdb.Get(ctx, keys.Bot(bot).Sent(taskID)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Record{}, false, nil
	case err != nil:
		return Record{}, false, fmt.Errorf("ledger: read %s: %w", taskID, err)
	}
	r, ok := Decode(v)
	return r, ok, nil
}

// Put stores r as the record of the bot's message taskID, for the
// retention.
func (s *Store) Put(ctx context.Context, bot, taskID string, r Record) error {
	if err := s.write(ctx, bot, taskID, r.Encode(), s.retention); err != nil {
		return fmt.Errorf("ledger: write %s: %w", taskID, err)
	}
	return nil
}

// Entry is one record to store with PutAll.
type Entry struct {
	Bot, TaskID string
	Record      Record
}

// PutAll stores the records of several messages in one round trip per
// node, for the retention; a broadcast's message (none is expected here)
// takes a round trip of its own, which keeps its broadcast's counts.
func (s *Store) PutAll(ctx context.Context, entries []Entry) error {
	var rest []Entry
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			if _, ok := keys.BroadcastOf(e.TaskID); ok {
				rest = append(rest, e)
				continue
			}
			p.Set(ctx, keys.Bot(e.Bot).Sent(e.TaskID), e.Record.Encode(), s.retention)
		}
		return nil
	})
	for _, e := range rest {
		if err == nil {
			err = s.write(ctx, e.Bot, e.TaskID, e.Record.Encode(), s.retention)
		}
	}
	if err != nil {
		return fmt.Errorf("ledger: write %d records: %w", len(entries), err)
	}
	return nil
}

// raw reads the send record of taskID in each bot's space, in one round
// trip per node: the bot whose space holds one and its value ("" when none
// does).
func (s *Store) raw(ctx context.Context, bots []string, taskID string) (bot, value string, err error) {
	cmds := make([]*redis.StringCmd, len(bots))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range bots {
			cmds[i] = p.Get(ctx, keys.Bot(b).Sent(taskID))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", "", fmt.Errorf("ledger: read %s: %w", taskID, err)
	}
	for i, c := range cmds {
		if v, err := c.Result(); err == nil {
			return bots[i], v, nil
		}
	}
	return "", "", nil
}

// reopen turns the record of a failed message that is retried back into its
// send record (the parts already sent), so that the retry sends only the
// rest and the ledger shows it on its way again.
func (s *Store) reopen(ctx context.Context, bot, taskID string, r Record) error {
	if err := s.write(ctx, bot, taskID, r.Progress, s.retention); err != nil {
		return fmt.Errorf("ledger: reopen %s: %w", taskID, err)
	}
	return nil
}

// markCancel asks the worker that holds taskID to settle it as cancelled
// rather than send it.
// The mark is announced (keys.StopChannel) so that a worker holding the
// message in memory looks at it now rather than at its slot.
// A broadcast's message is marked through MarkCancelled, which keeps its
// broadcast's counts.
func (s *Store) markCancel(ctx context.Context, bot, taskID, by string) error {
	var err error
	if id, ok := keys.BroadcastOf(taskID); ok {
		_, err = s.MarkCancelled(ctx, bot, id, []string{taskID}, by)
	} else {
		err = s.rdb.Set(ctx, keys.Bot(bot).Cancel(taskID), by, s.retention).Err()
	}
	if err != nil {
		return fmt.Errorf("ledger: cancel %s: %w", taskID, err)
	}
	_ = s.rdb.Publish(ctx, keys.StopChannel(), bot).Err() // a lost notice only waits for the slot
	return nil
}
