package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/statushook"
)

// Digester handles digest tasks: it claims their items, renders them and
// hands the messages to the ordinary send path.
type Digester struct {
	rdb    redis.UniversalClient
	enq    *jobs.Enqueuer
	client *asynq.Client
	cfg    Config
	ledger *ledger.Store
	events *statushook.Emitter
}

// New returns a Digester that enqueues through enq on rdb (both shared with
// the caller, who closes them) and records in book, when set, which message
// carried each item (the ledger's coalesced state), telling the items'
// callback URLs through events. cfg is completed with defaults and checked.
func New(rdb redis.UniversalClient, enq *jobs.Enqueuer, cfg Config, book *ledger.Store, events *statushook.Emitter) (*Digester, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rdb == nil || enq == nil {
		return nil, errors.New("digest: New needs a Redis client and an Enqueuer")
	}
	return &Digester{rdb: rdb, enq: enq, client: asynq.NewClientFromRedisClient(rdb), cfg: cfg, ledger: book, events: events}, nil
}

// Report says what one digest task did, for logs and metrics.
type Report struct {
	// Items is the number of items the task held.
	Items int
	// Delivered counts items handed to the send path: in digest messages,
	// or alone when an item had no company.
	Delivered int
	// Carried counts items that did not fit and went back to the group.
	Carried int
	// Skipped counts items another digest had claimed.
	Skipped int
	// Invalid counts unreadable items, enqueued again on their own.
	Invalid int
	// Messages is the number of messages enqueued.
	Messages int
	// RenderErr is set when rendering failed and every item was sent on
	// its own instead (a bug, but no item is lost for it).
	RenderErr error
}

// ProcessDigest handles one TypeDigest task. Errors wrapping
// ErrInvalidPayload are permanent (archive the task); any other error is a
// Redis failure to retry: every step is idempotent, so a retry after any
// error, or a crash, enqueues nothing twice.
func (d *Digester) ProcessDigest(ctx context.Context, id, queue string, payload []byte) (Report, error) {
	entries, err := decodePayload(payload)
	if err != nil {
		return Report{}, err
	}
	return d.process(ctx, id, queue, entries)
}

// ProcessItem handles a digest item task that reached a worker outside any
// digest (run by hand from the web UI, or an unreadable item the digest
// handler put back on its own): a readable item is sent on its own, once; an
// unreadable one is an error wrapping ErrInvalidPayload.
func (d *Digester) ProcessItem(ctx context.Context, id, queue string, payload []byte) (Report, error) {
	it, err := jobs.DecodeItem(payload)
	if err != nil {
		return Report{Items: 1}, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	return d.process(ctx, id, queue, []entry{{item: it}})
}

// process claims the items of a digest and delivers the ones it won. Each
// step records its counts in the Report as it goes, so a failing step still
// reports what the earlier ones did.
func (d *Digester) process(ctx context.Context, id, queue string, entries []entry) (Report, error) {
	r := Report{Items: len(entries)}
	items, err := d.readable(ctx, id, queue, entries, &r)
	if err != nil {
		return r, err
	}
	owned, err := d.claimItems(ctx, id, items)
	if err != nil {
		return r, err
	}
	r.Skipped += len(items) - len(owned)
	oldestFirst(owned)
	err = d.deliver(ctx, id, queue, owned, &r)
	return r, err
}

// readable returns the digest's readable items, each id once. Unreadable
// entries go back to the queue on their own (counted as invalid); an id seen
// twice counts as skipped.
func (d *Digester) readable(ctx context.Context, id, queue string, entries []entry, r *Report) ([]jobs.CoalescedItem, error) {
	var items []jobs.CoalescedItem
	seen := map[string]bool{}
	for i, e := range entries {
		switch {
		case e.bad != nil:
			if err := d.requeueBad(ctx, id, queue, i, *e.bad); err != nil {
				return nil, err
			}
			r.Invalid++
		case seen[e.item.ID]:
			r.Skipped++
		default:
			seen[e.item.ID] = true
			items = append(items, e.item)
		}
	}
	return items, nil
}

// claimItems claims items for the digest id and returns those it won; the
// others belong to another digest, which delivers them.
func (d *Digester) claimItems(ctx context.Context, id string, items []jobs.CoalescedItem) ([]jobs.CoalescedItem, error) {
	// A digest's items share a group, hence a bot; claims go by bot all the
	// same, as each bot's claims live in that bot's slot.
	byBot := map[string][]int{}
	var bots []string
	for i, it := range items {
		b := it.Message.BotName()
		if _, ok := byBot[b]; !ok {
			bots = append(bots, b)
		}
		byBot[b] = append(byBot[b], i)
	}
	mine := make([]bool, len(items))
	for _, b := range bots {
		idx := byBot[b]
		ids := make([]string, len(idx))
		for j, i := range idx {
			ids[j] = items[i].ID
		}
		got, err := claim(ctx, d.rdb, keys.Bot(b), id, ids, d.cfg.ClaimTTL.Milliseconds())
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			mine[i] = got[j]
		}
	}
	var owned []jobs.CoalescedItem
	for i, it := range items {
		if mine[i] {
			owned = append(owned, it)
		}
	}
	return owned, nil
}

// oldestFirst sorts items oldest first (ties by id). A carried item keeps
// its creation time, so it leads the next digest.
func oldestFirst(items []jobs.CoalescedItem) {
	slices.SortStableFunc(items, func(a, b jobs.CoalescedItem) int {
		if c := a.Message.CreatedAt.Compare(b.Message.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// deliver hands the owned items to the send path: a lone item as its
// producer wrote it, several in digest messages. Should rendering fail,
// every item goes alone rather than being lost.
func (d *Digester) deliver(ctx context.Context, id, queue string, owned []jobs.CoalescedItem, r *Report) error {
	switch len(owned) {
	case 0:
		return nil
	case 1:
		// Alone: the message goes out as its producer wrote it.
		if err := d.alone(ctx, id, queue, owned); err != nil {
			return err
		}
		r.Delivered, r.Messages = 1, 1
		return nil
	}
	shown := make([]jobs.DigestItem, len(owned))
	for i, it := range owned {
		shown[i] = it.Item
	}
	rd, err := Render(shown, d.cfg.MaxMessages, d.cfg.MessageLimit)
	if err != nil {
		r.RenderErr = err
		if err := d.alone(ctx, id, queue, owned); err != nil {
			return err
		}
		r.Delivered, r.Messages = len(owned), len(owned)
		return nil
	}
	if err := d.sendRendered(ctx, id, queue, owned, rd); err != nil {
		return err
	}
	r.Delivered, r.Messages = rd.Count, len(rd.Texts)
	return d.carry(ctx, id, queue, owned[rd.Count:], r)
}

// sendRendered enqueues the digest messages of rd, each with the items it
// shows, under idempotency keys derived from the digest id.
func (d *Digester) sendRendered(ctx context.Context, id, queue string, owned []jobs.CoalescedItem, rd Rendered) error {
	next := 0
	for i, text := range rd.Texts {
		part := owned[next : next+rd.PerText[i]]
		next += rd.PerText[i]
		carrier, err := d.send(ctx, queue, partMessage(part, text, partKey(id, i+1)))
		if err != nil {
			return err
		}
		if err := d.coalesced(ctx, queue, part, carrier); err != nil {
			return err
		}
	}
	return nil
}

// coalesced records, for each item, the message that carries it: its
// ledger state is coalesced until the ledger forgets it, and its status
// points at the carrier's. A retried digest writes the same records again.
func (d *Digester) coalesced(ctx context.Context, queue string, items []jobs.CoalescedItem, carrier string) error {
	if d.ledger == nil {
		return nil
	}
	now := time.Now().UnixMilli()
	for _, it := range items {
		m := it.Message
		rec := ledger.Record{State: ledger.StateCoalesced, Chat: m.Chat, Queue: queue, From: m.From,
			Created: ledger.Millis(m.CreatedAt), Settled: now, Digest: carrier, Topic: m.MessageThreadID}
		if err := d.ledger.Put(ctx, m.Bot, it.ID, rec); err != nil {
			return err
		}
		if err := d.announce(ctx, it, rec); err != nil {
			return err
		}
	}
	return nil
}

// announce stores the message.coalesced event of an item whose message
// names a callback URL. A Redis failure fails the digest, which is retried
// (the event's id makes the repeat harmless); callbacks being off or a URL
// the policy refuses are the sender's business, not the digest's.
func (d *Digester) announce(ctx context.Context, it jobs.CoalescedItem, rec ledger.Record) error {
	if it.Message.CallbackURL == "" || !d.events.Enabled() {
		return nil
	}
	typ := statushook.TypeMessageCoalesced
	ev := statushook.Event{ID: statushook.EventID(it.ID, typ), Type: typ, Timestamp: time.UnixMilli(rec.Settled),
		Data: struct {
			TaskID string `json:"task_id"`
			ledger.Status
		}{it.ID, ledger.StatusOf(it.ID, it.Message.BotName(), rec)}}
	err := d.events.Emit(ctx, it.Message.CallbackURL, ev)
	var ue *statushook.URLError
	if errors.As(err, &ue) {
		return nil
	}
	return err
}

// carry puts the items that did not fit back into their group, under ids
// derived from the digest, for the next digest to deliver.
func (d *Digester) carry(ctx context.Context, id, queue string, rest []jobs.CoalescedItem, r *Report) error {
	for _, it := range rest {
		carried := it
		carried.ID = carriedID(id, it.ID)
		if _, err := d.enq.EnqueueItem(ctx, queue, carried); err != nil {
			return err
		}
		// The item's status follows it to its new id, in the next digest.
		if err := d.coalesced(ctx, queue, []jobs.CoalescedItem{it}, carried.ID); err != nil {
			return err
		}
		r.Carried++
	}
	return nil
}

// alone sends each item as its own message, unchanged but for the
// idempotency key, which is the digest's.
func (d *Digester) alone(ctx context.Context, id, queue string, items []jobs.CoalescedItem) error {
	for i, it := range items {
		msg := it.Message
		msg.IdempotencyKey = partKey(id, i+1)
		carrier, err := d.send(ctx, queue, msg)
		if err != nil {
			return err
		}
		if err := d.coalesced(ctx, queue, items[i:i+1], carrier); err != nil {
			return err
		}
	}
	return nil
}

// send enqueues a message on the ordinary send path and returns its task
// id. A message the Enqueuer refuses cannot become acceptable by retrying.
func (d *Digester) send(ctx context.Context, queue string, msg jobs.SendMessage) (string, error) {
	res, err := d.enq.Enqueue(ctx, jobs.Request{Queue: queue, Message: msg})
	var verr *jobs.ValidationError
	if errors.As(err, &verr) {
		return "", fmt.Errorf("%w: digest message refused: %v", ErrInvalidPayload, err)
	}
	return res.TaskID, err
}

// requeueBad enqueues an unreadable item on its own, under a task id derived
// from the digest and its position, so a retried digest does it once. A
// digest item or SendMessage goes back with its type; anything else as a
// digest item, which the worker archives as an invalid payload.
func (d *Digester) requeueBad(ctx context.Context, digestID, queue string, i int, u unreadable) error {
	typ := u.Type
	if typ != jobs.TypeSendMessage {
		typ = jobs.TypeDigestItem
	}
	_, err := d.client.EnqueueContext(ctx, asynq.NewTask(typ, []byte(u.Raw)),
		asynq.Queue(queue),
		asynq.TaskID(hashID("digest-bad-", digestID, strconv.Itoa(i))),
		asynq.MaxRetry(broker.RetryCeiling),
		asynq.Timeout(TaskTimeout),
	)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return nil
	case err != nil:
		return fmt.Errorf("enqueue an unreadable digest item on its own: %w", err)
	}
	_ = broker.Notify(ctx, d.rdb, queue)
	return nil
}

// partMessage is digest message text for the items of part.
func partMessage(part []jobs.CoalescedItem, text, key string) jobs.SendMessage {
	first := part[0].Message
	m := jobs.SendMessage{
		Chat:                first.Chat,
		Bot:                 first.Bot,
		MessageThreadID:     first.MessageThreadID,
		Text:                text,
		ParseMode:           string(markup.HTML),
		DisableLinkPreview:  true,
		DisableNotification: true,
		IdempotencyKey:      key,
	}
	for _, it := range part {
		msg := it.Message
		m.DisableNotification = m.DisableNotification && msg.DisableNotification
		m.ProtectContent = m.ProtectContent || msg.ProtectContent
		if msg.MaxRetry != nil && (m.MaxRetry == nil || *msg.MaxRetry > *m.MaxRetry) {
			budget := *msg.MaxRetry
			m.MaxRetry = &budget
		}
		if !msg.CreatedAt.IsZero() && (m.CreatedAt.IsZero() || msg.CreatedAt.Before(m.CreatedAt)) {
			m.CreatedAt = msg.CreatedAt
		}
	}
	return m
}

// partKey is the idempotency key of the n-th message of a digest.
func partKey(digestID string, n int) string {
	return "digest:" + digestID + ":" + strconv.Itoa(n)
}

// carriedID is the id of an item carried from a digest to the next one. It
// depends only on the digest and the item, so a retried digest carries the
// item under the same id, and the claim of that id lets only one later
// digest deliver it.
func carriedID(digestID, itemID string) string { return hashID("carry-", digestID, itemID) }

func hashID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return prefix + hex.EncodeToString(h.Sum(nil)[:16])
}
