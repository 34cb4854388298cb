package interact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegram"
)

// SourceAckConfig configures SourceAcks.
type SourceAckConfig struct {
	// Redis holds the subjects, the acknowledgements and the lines.
	// Required.
	Redis redis.UniversalClient
	// Edits queues the edits of the acknowledged messages. Required.
	Edits *jobs.Enqueuer
	// Escalations, when set, stops the alert's escalation
	// (*escalation.Store).
	Escalations acknowledger
	// Bots are the names of the bots whose messages may carry the alert.
	Bots []string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// SourceAcks acknowledges an alert when the tool that sent it says it was
// acknowledged (PagerDuty's acknowledge event, Opsgenie's acknowledge):
// each message of the alert that carries an Acknowledge button
// (keys.Space.AlertButtons) is acknowledged as a press of that button
// would be — the first acknowledgement of the firing is stored, the
// escalation stops, and the message is edited to say "Acknowledged by
// <tool>". A firing acknowledged already (by a press, or an earlier event)
// is left as it is; an event repeated after a failure finishes what the
// first began.
type SourceAcks struct {
	h    *handler
	bots []string
}

// NewSourceAcks returns a SourceAcks; it panics without Redis or Edits, a
// wiring mistake.
func NewSourceAcks(cfg SourceAckConfig) *SourceAcks {
	if cfg.Redis == nil || cfg.Edits == nil {
		panic("interact: SourceAckConfig.Redis and Edits are required")
	}
	hc := handlerConfig{Redis: cfg.Redis, Edits: cfg.Edits, Escalations: cfg.Escalations, Logger: cfg.Logger}.withDefaults()
	return &SourceAcks{h: &handler{cfg: hc, rdb: cfg.Redis, log: hc.Logger.With("component", "source-acks")}, bots: cfg.Bots}
}

// Acknowledge acknowledges the alert of identity (alerts.Alert.Identity)
// in the name of by (the tool). An error is Redis's: the caller has the
// event sent again.
func (s *SourceAcks) Acknowledge(ctx context.Context, by, identity string) error {
	for _, bot := range s.bots {
		members, err := s.h.rdb.SMembers(ctx, keys.Bot(bot).AlertButtons(identity)).Result()
		if err != nil {
			return err
		}
		slices.Sort(members)
		for _, m := range members {
			_, ref, ok := strings.Cut(m, "\n")
			if !ok {
				continue
			}
			if err := s.one(ctx, bot, by, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// threadWait bounds how long an acknowledgement waits for its message's
// thread record (awaitThread), and threadPoll how often it looks.
const (
	threadWait = time.Second
	threadPoll = 25 * time.Millisecond
)

// awaitThread waits, for at most threadWait, until the thread of p's
// alert has its record: a value naming the first message ("<id>:<kind>"),
// not the producer's "pending" mark, which it holds from the enqueue until
// the send. The worker writes the record once Telegram has answered the
// send, a moment after the message shows in the chat; an acknowledgement
// that came in between would name the incident without the thread's first
// message (incidentOf), and a repeat of the event after the record would
// name another, adding the line twice. Without a thread, or past the wait
// (the send failed or is still queued), it goes on.
func (s *SourceAcks) awaitThread(ctx context.Context, p *press) error {
	if p.subj.ThreadKey == "" {
		return nil
	}
	key := p.keys.Thread(p.subj.Chat, p.subj.ThreadKey)
	deadline := time.Now().Add(threadWait)
	for {
		v, err := s.h.rdb.Get(ctx, key).Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		case strings.Contains(v, ":"):
			return nil
		}
		if !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(threadPoll):
		}
	}
}

// one acknowledges the message whose buttons' subject is ref.
func (s *SourceAcks) one(ctx context.Context, bot, by, ref string) error {
	h := s.h
	subj, err := buttons.Load(ctx, h.rdb, bot, ref)
	switch {
	case errors.Is(err, buttons.ErrUnknown):
		return nil
	case err != nil:
		return err
	case !slices.Contains(subj.Actions, buttons.Ack):
		return nil
	}
	p := &press{bot: bot, keys: keys.Bot(bot), q: &telegram.CallbackQuery{}, action: buttons.Ack, ref: ref, subj: subj, byName: by,
		recorded: true, log: h.log.With("bot", bot, "by", by, "alert", subj.Alert, "chat", subj.Chat)}
	if err := s.awaitThread(ctx, p); err != nil {
		return err
	}
	if p.incident, err = h.incidentOf(ctx, p); err != nil {
		return err
	}
	// The event's own record, as a press has its callback query's: it
	// keeps the line from being added twice when the event comes again.
	sum := sha256.Sum256([]byte(by + "\x00" + p.incident))
	p.q.ID = "source:" + hex.EncodeToString(sum[:12])
	now := h.cfg.Now()
	body, err := json.Marshal(ack{By: by, At: now.UTC(), Query: p.q.ID})
	if err != nil {
		return err
	}
	first, err := h.rdb.SetNX(ctx, p.keys.Acknowledged(subj.Chat, p.incident), body, h.cfg.AckRetention).Result()
	if err != nil {
		return err
	}
	if !first {
		var prev ack
		raw, err := h.rdb.Get(ctx, p.keys.Acknowledged(subj.Chat, p.incident)).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if json.Unmarshal(raw, &prev) != nil || prev.Query != p.q.ID {
			p.log.Info("acknowledgement from the source of an alert acknowledged already", "first_by", prev.By)
			return nil
		}
		now = prev.At // this event stored it before a failure
	}
	fired, err := h.stopEscalation(ctx, p, now)
	if err != nil {
		return err
	}
	if err := h.edit(ctx, p, ackLine(by, now, h.cfg.Now(), fired)); err != nil {
		return fmt.Errorf("interact: edit the acknowledged message: %w", err)
	}
	p.log.Info("alert acknowledged from its source")
	return h.rdb.PExpire(ctx, p.keys.CallbackQuery(p.q.ID), h.cfg.PressRetention).Err()
}
