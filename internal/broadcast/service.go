package broadcast

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
)

// Service creates broadcasts and answers for them: their status, and
// cancel.
type Service struct {
	rdb     redis.UniversalClient
	enq     *jobs.Enqueuer
	blocked *chats.Store
	ledger  *ledger.Store
	store   store
	cfg     Config
}

// New returns a Service storing messages through enq, skipping the chats
// blocked says blocked the bot, and reading messages' records from lg
// (whose retention the broadcasts' records keep too). cfg's defaults are
// filled in.
func New(rdb redis.UniversalClient, enq *jobs.Enqueuer, blocked *chats.Store, lg *ledger.Store, cfg Config) *Service {
	return &Service{rdb: rdb, enq: enq, blocked: blocked, ledger: lg, cfg: cfg.WithDefaults(),
		store: store{rdb: rdb, retention: lg.Retention()}}
}

// MaxBodyBytes is the body limit of the broadcasts' requests.
func (s *Service) MaxBodyBytes() int64 { return s.cfg.MaxBodyBytes }

// MaxChats is the most chats a broadcast or audience may list
// (HERALD_BROADCAST_MAX_CHATS), repeats included.
func (s *Service) MaxChats() int { return s.cfg.MaxChats }

// MaxTextLen is the longest text, and so template, in UTF-16 code units
// (HERALD_MAX_TEXT_LEN).
func (s *Service) MaxTextLen() int { return s.enq.MaxTextLen() }

// ErrNotFound is a broadcast that is not known (any more).
var ErrNotFound = errors.New("no such broadcast")

// ErrOff is returned when the queue of broadcasts is not one the
// producer may write to.
var ErrOff = errors.New("broadcasts are off: HERALD_QUEUES does not list the queue " + jobs.QueueBroadcast +
	"; add it (e.g. " + jobs.QueueBroadcast + "=1) for producers and workers")

// Result is the answer to a broadcast request.
type Result struct {
	ID string `json:"broadcast_id"`
	// Queued counts the messages stored; Blocked the chats left out
	// because they blocked the bot; RepeatedChats the chats listed more
	// than once (each gets one message).
	Queued        int `json:"queued"`
	Blocked       int `json:"blocked"`
	RepeatedChats int `json:"repeated_chats,omitempty"`
	// Duplicate is true when the idempotency key named a broadcast that
	// was stored already: nothing new was stored.
	Duplicate bool `json:"duplicate"`
}

// idBytes is how many bytes a broadcast id carries after its "bc-": 64
// bits, in 11 characters of base64url, short on purpose, as every
// message's task id (and so its hash's key, its pending list entry and
// its task message) repeats it.
const idBytes = 8

// broadcastID is the id of a request's broadcast: derived from its
// sender and idempotency key when it has one (jobs.IdempotencyID, as a
// message's), random otherwise.
func broadcastID(req Request) string {
	var b [idBytes]byte
	if req.IdempotencyKey != "" {
		sum, _ := hex.DecodeString(strings.TrimPrefix(jobs.IdempotencyID(req.From, req.IdempotencyKey), "idem-"))
		copy(b[:], sum)
	} else {
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	}
	return "bc-" + base64.RawURLEncoding.EncodeToString(b[:])
}
