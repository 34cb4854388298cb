package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// A broadcast is stored as two keys under Herald's fleet-wide tag
// (keys.Broadcast, keys.BroadcastChats), both kept for the ledger's
// retention: its record, and the chats its messages go to. Each message
// is an ordinary SendMessage task in the broadcast queue whose task id is
// the broadcast's id and the chat (TaskID), so the ledger's record of each
// one is found from the chat list alone, and a repeated request cannot
// store a chat's message twice.

// The states of a broadcast's record.
const (
	// stateStoring: the record is written, its messages are being
	// stored. A request that stopped here (Redis failed, the producer
	// died) is completed by its retry with the same idempotency key.
	stateStoring = "storing"
	// stateStored: every message is stored; a repeated request answers
	// from the record.
	stateStored = "stored"
)

// record is a broadcast's record in Redis.
type record struct {
	ID    string `json:"id"`
	Bot   string `json:"bot"`
	From  string `json:"from,omitempty"`
	Queue string `json:"queue"`
	State string `json:"state"`
	// Created is when the first request for it came (Unix milliseconds).
	Created int64 `json:"t0"`
	// Chats counts the messages stored (one per chat); Blocked the chats
	// left out because they blocked the bot; Repeats the chats the
	// request listed more than once.
	Chats   int `json:"n"`
	Blocked int `json:"b,omitempty"`
	Repeats int `json:"rep,omitempty"`
	// Parts is the most parts one of its messages has (a text longer than
	// Telegram's limit goes out as several), for the ETA.
	Parts int `json:"p,omitempty"`
	// Counted says the ledger keeps the counts of its messages
	// (keys.Space.BroadcastCounts), which its status reads; a broadcast
	// stored by an earlier version is counted from its messages' records.
	Counted bool `json:"k,omitempty"`
}

// TaskID is the task id of a broadcast's message to chat (as
// jobs.ValidateChat spells it).
func TaskID(broadcastID, chat string) string { return keys.BroadcastTaskID(broadcastID, chat) }

// errNoRecord is a broadcast the store does not know.
var errNoRecord = errors.New("no such broadcast")

// store keeps broadcasts' records and chat lists.
type store struct {
	rdb       redis.UniversalClient
	retention time.Duration
}

// load reads id's record; errNoRecord when there is none.
func (s store) load(ctx context.Context, id string) (record, error) {
	v, err := s.rdb.Get(ctx, keys.Broadcast(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return record{}, errNoRecord
	case err != nil:
		return record{}, fmt.Errorf("read broadcast %s: %w", id, err)
	}
	var r record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return record{}, fmt.Errorf("broadcast %s: unreadable record: %w", id, err)
	}
	return r, nil
}

// claim writes r unless id has a record; it returns the record that is
// there, r when it wrote it.
func (s store) claim(ctx context.Context, r record) (record, error) {
	durable.Wrote(ctx, keys.Broadcast(r.ID))
	ok, err := s.rdb.SetNX(ctx, keys.Broadcast(r.ID), encode(r), s.retention).Result()
	if err != nil {
		return record{}, fmt.Errorf("write broadcast %s: %w", r.ID, err)
	}
	if ok {
		return r, nil
	}
	return s.load(ctx, r.ID)
}

// save writes r and the chats its messages go to, for the retention
// counted from the record's creation.
func (s store) save(ctx context.Context, r record, chats []string) error {
	ttl := s.retention - time.Since(time.UnixMilli(r.Created))
	if ttl < time.Minute {
		ttl = time.Minute
	}
	durable.Wrote(ctx, keys.Broadcast(r.ID))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if chats != nil {
			p.Set(ctx, keys.BroadcastChats(r.ID), strings.Join(chats, "\n"), ttl)
		}
		p.Set(ctx, keys.Broadcast(r.ID), encode(r), ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("write broadcast %s: %w", r.ID, err)
	}
	return nil
}

// chats reads the chats of broadcast id.
func (s store) chats(ctx context.Context, id string) ([]string, error) {
	v, err := s.rdb.Get(ctx, keys.BroadcastChats(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the chats of broadcast %s: %w", id, err)
	}
	if v == "" {
		return nil, nil
	}
	return strings.Split(v, "\n"), nil
}

func encode(r record) string {
	b, _ := json.Marshal(r) // strings and numbers: cannot fail
	return string(b)
}
