package jobs

import (
	"github.com/herald-dev/herald/internal/keys"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/markup"
)

// TypeDigestItem is the asynq task type of a coalescible message while it
// waits in its destination's group for the next digest.
const TypeDigestItem = "telegram:digest_item"

// ItemPayloadVersion is the version of the CoalescedItem payload this build
// writes; workers refuse newer ones rather than guess.
const ItemPayloadVersion = 1

// MaxItemTitleLen bounds a digest item's title in UTF-16 code units. Titles
// are never shortened in a digest, so one title must fit in a message with
// room to spare.
const MaxItemTitleLen = 2048

// MaxItemURLLen bounds a digest item's link, in bytes.
const MaxItemURLLen = 2048

// derivedTitleLen is how much of a message's first line becomes the title of
// an item derived from its text; the rest of the line opens the summary.
const derivedTitleLen = 256

// CoalescedItem is the payload of a TypeDigestItem task: the message as it
// would be sent on its own, and how it reads as one entry of a digest.
type CoalescedItem struct {
	// V is the payload version; zero means ItemPayloadVersion.
	V int `json:"v"`
	// ID identifies the item across digests: the claim that stops two
	// digests from delivering it is keyed by it. It is also the task id of
	// the item's own task.
	ID string `json:"id"`
	// Item is the entry shown in a digest.
	Item DigestItem `json:"item"`
	// Message is sent unchanged when the item turns out to be alone.
	Message SendMessage `json:"message"`
}

// Encode returns the task payload.
func (c CoalescedItem) Encode() ([]byte, error) { return json.Marshal(c) }

// DecodeItem parses and checks a TypeDigestItem payload. An item whose
// title is blank gets one derived from its message.
func DecodeItem(payload []byte) (CoalescedItem, error) {
	var c CoalescedItem
	if err := json.NewDecoder(bytes.NewReader(payload)).Decode(&c); err != nil {
		return c, fmt.Errorf("payload is not a digest item JSON object: %w", err)
	}
	if c.V == 0 {
		c.V = ItemPayloadVersion
	}
	if c.V < 0 || c.V > ItemPayloadVersion {
		return c, fmt.Errorf("digest item payload version %d is not supported by this build (max %d): upgrade the worker", c.V, ItemPayloadVersion)
	}
	if strings.TrimSpace(c.ID) == "" {
		return c, errors.New("digest item has no id")
	}
	if c.Message.V == 0 {
		c.Message.V = PayloadVersion
	}
	if err := c.Message.Validate(Limits{MaxTextLen: 1 << 20}); err != nil {
		return c, fmt.Errorf("digest item %s: %w", c.ID, err)
	}
	if strings.TrimSpace(c.Item.Title) == "" {
		c.Item = DeriveItem(c.Message)
	}
	return c, nil
}

// GroupKey names the asynq group of a message's destination: its chat, and
// its forum topic when set ("-100123:7"), after the bot's name for a bot
// other than the default ("pages/-100123:7"): each bot's digests are its
// own. @usernames are lower-cased, as Telegram treats them
// case-insensitively.
func GroupKey(m SendMessage) string {
	chat := m.Chat
	if strings.HasPrefix(chat, "@") {
		chat = strings.ToLower(chat)
	}
	if m.MessageThreadID != 0 {
		chat += ":" + strconv.Itoa(m.MessageThreadID)
	}
	if m.Bot != "" && m.Bot != keys.DefaultBot {
		chat = m.Bot + "/" + chat
	}
	return chat
}

// DeriveItem builds the digest entry of a message that brought none: the
// visible text's first non-blank line is the title (its first 256 UTF-16
// units; a longer line continues in the summary) and the rest is the summary.
// Text whose markup does not parse is taken literally, as the worker would
// send it.
func DeriveItem(m SendMessage) DigestItem {
	plain, err := markup.Plain(m.Text, markup.Mode(m.ParseMode))
	if err != nil {
		plain = m.Text
	}
	plain = strings.TrimLeftFunc(plain, unicode.IsSpace)
	first, rest, _ := strings.Cut(plain, "\n")
	first = strings.TrimSpace(first)
	title, more := cutTitle(first, derivedTitleLen)
	summary := strings.TrimSpace(rest)
	if more != "" {
		summary = strings.TrimSpace(more + "\n" + summary)
	}
	return DigestItem{Title: title, Summary: summary}
}

// cutTitle splits s after at most max UTF-16 units, at the last space of the
// second half when there is one, else at a rune boundary.
func cutTitle(s string, max int) (string, string) {
	if markup.UTF16Len(s) <= max {
		return s, ""
	}
	units, end, space := 0, 0, -1
	for i, r := range s {
		n := markup.RuneUTF16Len(r)
		if units+n > max {
			break
		}
		units += n
		end = i + utf8.RuneLen(r)
		if r == ' ' && units > max/2 {
			space = i
		}
	}
	if space > 0 {
		return strings.TrimSpace(s[:space]), strings.TrimSpace(s[space:])
	}
	return s[:end], s[end:]
}

// validateItem checks a digest entry a producer supplied.
func validateItem(it DigestItem, lim Limits, verr *ValidationError) {
	maxLen := lim.MaxTextLen
	if maxLen <= 0 {
		maxLen = DefaultMaxTextLen
	}
	switch {
	case !utf8.ValidString(it.Title):
		verr.add("item.title", "is not valid UTF-8")
	case strings.TrimSpace(it.Title) == "":
		verr.add("item.title", "is required and must not be blank")
	case markup.UTF16Len(it.Title) > MaxItemTitleLen:
		verr.add("item.title", "is %d UTF-16 code units long; the limit is %d", markup.UTF16Len(it.Title), MaxItemTitleLen)
	}
	if it.URL != "" {
		if len(it.URL) > MaxItemURLLen {
			verr.add("item.url", "is %d bytes long; the limit is %d", len(it.URL), MaxItemURLLen)
		} else if u, err := url.Parse(it.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !utf8.ValidString(it.URL) {
			verr.add("item.url", "must be an absolute http or https URL")
		}
	}
	if !utf8.ValidString(it.Summary) {
		verr.add("item.summary", "is not valid UTF-8")
	} else if n := markup.UTF16Len(it.Summary); n > maxLen {
		verr.add("item.summary", "is %d UTF-16 code units long; the limit is %d", n, maxLen)
	}
}

// coalescible reports whether a request goes into a digest group.
func coalescible(req Request, queue string) bool {
	return req.Coalesce && queue != QueueCritical
}

// enqueueCoalesced stores a validated message as a digest item. With an
// idempotency key the item's id is the key's task id, claimed as for a
// single message.
func (e *Enqueuer) enqueueCoalesced(ctx context.Context, msg SendMessage, queue string, item *DigestItem) (Result, error) {
	it := CoalescedItem{V: ItemPayloadVersion, Message: msg}
	if item != nil {
		it.Item = *item
		it.Item.Title = strings.TrimSpace(it.Item.Title)
	} else {
		it.Item = DeriveItem(msg)
	}
	if msg.IdempotencyKey == "" {
		it.ID = uuid.NewString()
		return e.EnqueueItem(ctx, queue, it)
	}
	it.ID = IdempotencyID(msg.From, msg.IdempotencyKey)
	if res, dup, err := e.claimed(ctx, it.ID); err != nil || dup {
		return res, err
	}
	res, err := e.EnqueueItem(ctx, queue, it)
	if err == nil && !res.Duplicate {
		// Best effort, as for single messages.
		e.claim(ctx, res.TaskID, res.Queue)
	}
	return res, err
}

// EnqueueItem stores a digest item in its destination's group of queue,
// under the task id it.ID. An item whose id is already waiting in the queue
// is reported as a duplicate and not stored again. Producers go through
// Enqueue; the digest worker uses this to carry items to the next digest.
// Errors wrap ErrUnavailable when Redis did not take the item.
func (e *Enqueuer) EnqueueItem(ctx context.Context, queue string, it CoalescedItem) (Result, error) {
	if it.ID == "" {
		return Result{}, errors.New("jobs: a digest item needs an id")
	}
	if it.V == 0 {
		it.V = ItemPayloadVersion
	}
	payload, err := it.Encode()
	if err != nil {
		return Result{}, fmt.Errorf("encode digest item: %w", err)
	}
	_, err = e.client.EnqueueContext(ctx, asynq.NewTask(TypeDigestItem, payload),
		asynq.Queue(queue),
		asynq.Group(GroupKey(it.Message)),
		asynq.TaskID(it.ID),
		asynq.MaxRetry(broker.RetryCeiling),
		asynq.Timeout(e.cfg.Timeout),
	)
	e.wrote(ctx, queue, it.Message)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return Result{TaskID: it.ID, Queue: queue, Duplicate: true, Coalesced: true}, nil
	case err != nil:
		return Result{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// No wake-up: a grouped task waits for its group's aggregation, which
	// the workers' aggregators run on their own clock.
	return Result{TaskID: it.ID, Queue: queue, Coalesced: true}, nil
}
