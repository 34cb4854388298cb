package broadcast

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
)

// Create stores a broadcast: one message per chat in the broadcast queue,
// every one of them before it returns, pipelined (jobs.EnqueueBatch), with
// one record. Chats that blocked the bot are left out and counted. A
// request with the idempotency key of a stored broadcast stores nothing
// and answers as the first did (Duplicate); one whose first try stopped
// half-way stores what that one missed, and no chat's message twice.
//
// Bad input is a *jobs.ValidationError naming each field; an error
// wrapping jobs.ErrUnavailable means Redis failed and the request may be
// sent again (with its idempotency key, to be sure nothing is sent
// twice); ErrOff means the broadcast queue is not configured. Call the
// Enqueuer's Settle before reporting the broadcast as stored.
func (s *Service) Create(ctx context.Context, req Request) (Result, error) {
	if !s.enq.Accepts(jobs.QueueBroadcast) {
		return Result{}, ErrOff
	}
	if err := checkSizes(req, s.enq.MaxTextLen(), s.cfg.MaxChats); err != nil {
		return Result{}, err
	}
	list, repeats, err := s.chatsOf(ctx, req)
	if err != nil {
		return Result{}, err
	}
	now := time.Now()
	msgs, parts, err := s.render(ctx, req, list, now)
	if err != nil {
		return Result{}, err
	}
	if req.Admit != nil {
		if err := req.Admit(ctx, len(list), now); err != nil {
			return Result{}, err
		}
	}
	rec, err := s.store.claim(ctx, record{ID: broadcastID(req), Bot: botOf(req.Bot), From: req.From, Queue: jobs.QueueBroadcast,
		State: stateStoring, Created: time.Now().UnixMilli(), Repeats: repeats, Parts: parts, Counted: true})
	if err != nil {
		return Result{}, unavailable(err)
	}
	if rec.State == stateStored {
		return Result{ID: rec.ID, Queued: rec.Chats, Blocked: rec.Blocked, RepeatedChats: rec.Repeats, Duplicate: true}, nil
	}
	return s.storeAll(ctx, rec, list, msgs)
}

// storeAll stores the messages of rec, a broadcast being stored, leaving
// out the chats that blocked the bot, and marks the record stored.
func (s *Service) storeAll(ctx context.Context, rec record, list []string, msgs []jobs.SendMessage) (Result, error) {
	blocked, err := s.blocked.BlockedAmong(ctx, rec.Bot, list)
	if err != nil {
		return Result{}, unavailable(err)
	}
	entries := make([]string, len(list))
	items := make([]jobs.BatchItem, 0, len(list))
	for i, c := range list {
		if blocked[i] {
			entries[i] = skippedMark + c
			continue
		}
		entries[i] = c
		items = append(items, jobs.BatchItem{TaskID: TaskID(rec.ID, c), Message: msgs[i]})
	}
	rec.Chats, rec.Blocked = len(items), len(list)-len(items)
	// The chat list goes first: a cancel or a status read while the
	// messages are being stored finds every one of them.
	if err := s.store.save(ctx, rec, entries); err != nil {
		return Result{}, unavailable(err)
	}
	if _, err := s.enq.EnqueueBatch(ctx, jobs.QueueBroadcast, items); err != nil {
		return Result{}, err
	}
	rec.State = stateStored
	if err := s.store.save(ctx, rec, nil); err != nil {
		return Result{}, unavailable(err)
	}
	return Result{ID: rec.ID, Queued: rec.Chats, Blocked: rec.Blocked, RepeatedChats: rec.Repeats}, nil
}

// skippedMark starts the entry of a chat in a broadcast's chat list that
// got no message: it had blocked the bot.
const skippedMark = "!"

// unavailable wraps a Redis error as jobs.ErrUnavailable.
func unavailable(err error) error {
	if errors.Is(err, jobs.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", jobs.ErrUnavailable, err)
}

// botOf is the name of a request's bot.
func botOf(bot string) string {
	if bot == "" {
		return keys.DefaultBot
	}
	return bot
}

// chatsOf returns the request's chats, checked, normalised and without
// repeats: its list, or its audience's.
func (s *Service) chatsOf(ctx context.Context, req Request) ([]string, int, error) {
	field, chats := "chats", req.Chats
	if req.Audience != "" && len(req.Chats) == 0 {
		var err error
		if chats, err = s.audience(ctx, req.From, req.Audience); err != nil {
			return nil, 0, err
		}
		field = "audience"
	}
	list, repeats, err := checkChats(field, chats, s.cfg.MaxChats)
	if err != nil {
		return nil, 0, err
	}
	if err := checkShape(req, list); err != nil {
		return nil, 0, err
	}
	return list, repeats, nil
}

// render builds each chat's message, validated as POST /v1/messages
// validates one (markup included), and the most parts one of them has.
func (s *Service) render(ctx context.Context, req Request, list []string, now time.Time) ([]jobs.SendMessage, int, error) {
	base := jobs.SendMessage{Bot: req.Bot, ParseMode: req.ParseMode, DisableNotification: req.DisableNotification,
		DisableLinkPreview: req.DisableLinkPreview, ProtectContent: req.ProtectContent, Photo: req.Photo,
		Buttons: req.Buttons, From: req.From, CallbackURL: req.CallbackURL, Paid: req.Paid,
		// Milliseconds, as the ledger keeps it: 6 bytes less per message.
		CreatedAt: now.UTC().Truncate(time.Millisecond)}
	prepare := func(chat, text string) (jobs.SendMessage, error) {
		m := base
		m.Chat, m.Text = chat, text
		return s.enq.Prepare(jobs.Request{Queue: jobs.QueueBroadcast, CheckMarkup: true, Message: m})
	}
	msgs := make([]jobs.SendMessage, len(list))
	tmpl := parseTemplate(req.Text)
	if tmpl.plain() {
		// One text for all: checked once.
		first, err := prepare(list[0], req.Text)
		if err != nil {
			return nil, 0, err
		}
		for i, c := range list {
			msgs[i] = first
			msgs[i].Chat = c
		}
		return msgs, partsOf(req.Text), nil
	}
	mode, _ := markup.ParseMode(req.ParseMode) // a bad mode is reported by prepare
	values := valuesByChat(req.Values)
	parts := 1
	for i, c := range list {
		if err := stopped(ctx, i); err != nil {
			return nil, 0, err
		}
		text, missing := tmpl.render(values[keys.NormChat(c)], req.Defaults, mode)
		if missing != "" {
			return nil, 0, fieldErrors{{Field: "values", Message: fmt.Sprintf(
				"has no %q for chat %s, and defaults has none: give every chat a value for each {{name}} of the text, or a default", missing, c)}}.err()
		}
		m, err := prepare(c, text)
		if err != nil {
			return nil, 0, forChat(err, c, i)
		}
		msgs[i], parts = m, max(parts, partsOf(text))
	}
	return msgs, parts, nil
}

// forChat names the chat in the problems of its message, unless it is
// the first: those of the first are the request's own (a bad bot, parse
// mode or button), which every chat shares.
func forChat(err error, chat string, i int) error {
	var verr *jobs.ValidationError
	if i == 0 || !errors.As(err, &verr) {
		return err
	}
	out := make(fieldErrors, len(verr.Fields))
	for j, f := range verr.Fields {
		out[j] = jobs.FieldError{Field: f.Field, Message: "for chat " + chat + " (its values filled in): " + f.Message}
	}
	return out.err()
}
