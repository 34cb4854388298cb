package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
)

// Sender delivers one message to Telegram. *telegram.Client implements it;
// its errors are *telegram.Error.
type Sender interface {
	Send(ctx context.Context, m telegram.Message) (telegram.Sent, error)
}

// ChatResolver finds the numeric id of a chat named by @username (getChat).
// *telegram.Client implements it; its errors are *telegram.Error.
type ChatResolver interface {
	ChatID(ctx context.Context, chat string) (int64, error)
}

// Handler processes SendMessage tasks.
type Handler struct {
	rdb      redis.UniversalClient
	sender   Sender
	resolver ChatResolver // nil: @usernames are sent as they are
	limiter  *ratelimit.Limiter
	promoter *broker.Promoter
	metrics  *Metrics
	log      *slog.Logger

	backoffBase, backoffCap time.Duration
	retryAfterUnit          time.Duration
	// recordWindow bounds how long recordSent keeps trying.
	recordWindow time.Duration

	// waiters holds a place for each task that waits for its slot in memory
	// for up to waitLong; stopping closes when the process shuts down.
	waiters       chan struct{}
	waitLong      time.Duration
	stopping      chan struct{}
	sentRetention time.Duration

	migrations migrationCache
}

// saveProgress writes the task's progress record.
func (h *Handler) saveProgress(ctx context.Context, id string, p progress, messageID int) error {
	// A fresh context: a cancelled attempt must still record a send that
	// Telegram accepted, or the task would be sent twice.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	return h.rdb.Set(ctx, keys.Sent(id), p.encode(messageID), h.sentRetention).Err()
}

// recordSent records a part that Telegram accepted. Redis may be away for a
// moment (a restart, a failover): the record is retried, with backoff, for
// as long as the task cannot be handed to another worker (the lease
// recovery window), so that a redelivery finds it and does not send again.
func (h *Handler) recordSent(ctx context.Context, id string, p progress, messageID int) error {
	deadline := time.Now().Add(h.recordWindow)
	wait := 50 * time.Millisecond
	for {
		err := h.saveProgress(ctx, id, p, messageID)
		if err == nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		h.log.Warn("could not record a sent message yet; retrying", "task_id", id, "retry_in", wait, "error", err)
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

// ProcessTask implements asynq.Handler.
func (h *Handler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	attempt, _ := asynq.GetRetryCount(ctx)
	log := h.log.With("task_id", id, "queue", queue, "attempt", attempt)

	msg, err := jobs.Decode(t.Payload())
	if err != nil {
		return h.archive(ctx, log, "invalid_payload", err)
	}
	// Herald keeps the retry budget itself (asynq's is set out of reach), so
	// that rate-limit deferrals, which are not failures, can never exhaust it.
	r := &run{id: id, queue: queue, attempt: attempt, budget: jobs.DefaultMaxRetry, log: log}
	if msg.MaxRetry != nil {
		r.budget = *msg.MaxRetry
	}
	chat, err := h.resolveChat(ctx, msg.Chat)
	if err != nil {
		if tgErr, ok := telegram.AsError(err); ok {
			if tgErr.Temporary() {
				return h.retryLater(ctx, r, string(tgErr.Reason), tgErr)
			}
			return h.archive(ctx, log, string(tgErr.Reason), tgErr)
		}
		return h.retryLater(ctx, r, "redis", err)
	}
	var (
		prog       progress
		texts      []string
		modes      []markup.Mode
		loaded     bool
		migrations int
		tooMany    int
	)
	for !loaded || prog.done < len(texts) {
		record, slot, err := h.waitTurn(ctx, r, chat, !loaded)
		if err != nil {
			return err
		}
		if !loaded {
			// The progress record comes with the first limiter decision.
			prog, loaded = parseProgress(record), true
			texts, modes = parts(msg, prog)
			if prog.done >= len(texts) {
				h.metrics.SkippedAlreadySent.Inc()
				log.Info("task was already sent; not sending again", "parts", prog.done)
				return nil
			}
		}
		i := prog.done
		sent, err := h.sender.Send(ctx, telegram.Message{
			Chat:                chat,
			Text:                texts[i],
			ParseMode:           string(modes[i]),
			DisableNotification: msg.DisableNotification,
			ProtectContent:      msg.ProtectContent,
			MessageThreadID:     msg.MessageThreadID,
			DisableLinkPreview:  msg.DisableLinkPreview,
		})
		if err == nil {
			prog.done++
			if err := h.recordSent(ctx, id, prog, sent.MessageID); err != nil {
				// Telegram has the message; without the record a redelivery
				// would send it again. Say so loudly and carry on.
				h.metrics.PossibleDuplicates.Inc()
				log.Error("could not record a sent message; a redelivery may duplicate it", "error", err)
			}
			outcome := "sent"
			if modes[i] == markup.None && markup.Mode(msg.ParseMode) != markup.None {
				outcome = "downgraded"
			}
			h.metrics.Sent.WithLabelValues(queue, outcome).Inc()
			if i == 0 && !msg.CreatedAt.IsZero() {
				h.metrics.Latency.Observe(time.Since(msg.CreatedAt).Seconds())
			}
			log.Debug("sent", "part", i+1, "parts", len(texts), "message_id", sent.MessageID)
			continue
		}
		tgErr, ok := telegram.AsError(err)
		if !ok {
			return h.retryLater(ctx, r, "unknown", err)
		}
		switch tgErr.Reason {
		case telegram.ReasonRateLimited:
			h.metrics.TooMany.Inc()
			// retry_after counts whole seconds; a tenth of one more covers
			// its rounding and the trip back to Telegram.
			secs := max(int64(tgErr.RetryAfter/time.Second), 1)
			pause := time.Duration(secs)*h.retryAfterUnit + h.retryAfterUnit/10
			p, perr := h.limiter.Penalize(ctx, chat, slot, pause)
			if perr == nil {
				h.metrics.Pauses.WithLabelValues(p.Scope()).Inc()
				h.metrics.PauseSeconds.WithLabelValues(p.Scope()).Observe(max(p.Bot, p.Chat).Seconds())
				log.Warn("telegram answered 429; pausing", "retry_after", tgErr.RetryAfter, "scope", p.Scope(),
					"bot_pause", p.Bot, "chat_pause", p.Chat, "schedule_shift", p.Shift, "requeued", p.Requeued)
			}
			if tooMany++; perr != nil || tooMany > 2 {
				// The limiter could not record the pause (or Telegram keeps
				// refusing): wait it out here rather than loop.
				if perr != nil {
					log.Warn("could not record 429 in the limiter", "error", perr)
				}
				h.promoter.PromoteAt(queue, id, time.Now().Add(pause))
				return &laterError{Delay: pause, Reason: "telegram 429"}
			}
			// The next turn respects the pause; the slot is taken anew.
			continue
		case telegram.ReasonParseEntities:
			if modes[i] == markup.None {
				return h.archive(ctx, log, "parse_entities", tgErr)
			}
			prog.resplits = append(prog.resplits, resplit{from: i, plain: true, limit: limitAt(prog, i)})
			texts, modes = parts(msg, prog)
			log.Warn("telegram could not parse the markup; resending as plain text", "part", i+1, "error", tgErr.Description)
			// Remember the downgrade: the resend may have to wait for the
			// chat's next turn, in a later attempt.
			if err := h.saveProgress(ctx, id, prog, 0); err != nil {
				return h.retryLater(ctx, r, "redis", err)
			}
			continue
		case telegram.ReasonTooLong:
			// Telegram counts differently from Herald (markup, entities,
			// a server of its own): split the rest smaller and go on,
			// never archive readable text for it.
			next, ok := shorterLimit(limitAt(prog, i), texts[i], modes[i])
			if !ok {
				return h.archive(ctx, log, string(tgErr.Reason), tgErr)
			}
			prog.resplits = append(prog.resplits, resplit{from: i, plain: modes[i] == markup.None, limit: next})
			texts, modes = parts(msg, prog)
			log.Warn("telegram refused a part as too long; splitting the rest smaller", "part", i+1, "limit", next)
			if err := h.saveProgress(ctx, id, prog, 0); err != nil {
				return h.retryLater(ctx, r, "redis", err)
			}
			continue
		case telegram.ReasonMigrated:
			if tgErr.MigrateTo == 0 || migrations >= 2 {
				return h.archive(ctx, log, "chat_migrated", tgErr)
			}
			migrations++
			to := strconv.FormatInt(tgErr.MigrateTo, 10)
			if err := h.rdb.HSet(ctx, keys.Migrations(), chat, to).Err(); err != nil {
				log.Warn("could not remember chat migration", "error", err)
			}
			h.migrations.put(chat, to, 0)
			log.Info("chat was migrated to a supergroup; following", "from", chat, "to", to)
			chat = to
			continue
		case telegram.ReasonTimeout:
			h.metrics.PossibleDuplicates.Inc()
			log.Warn("telegram did not answer after the request was sent; retrying, the message may arrive twice", "error", tgErr)
			return h.retryLater(ctx, r, string(tgErr.Reason), tgErr)
		}
		if tgErr.Temporary() {
			return h.retryLater(ctx, r, string(tgErr.Reason), tgErr)
		}
		return h.archive(ctx, log, string(tgErr.Reason), tgErr)
	}
	return nil
}

// waitTurn waits for the message's send slot: it sleeps through waits that
// the limiter answers with Again and defers the task for longer ones. A
// task that holds one of the process's waiter places may sleep through
// waits of up to waitLong in memory, which saves the round trip of a
// deferral through Redis. It returns the task's progress record (read with
// the decision when progress is set) and the slot that the send uses.
func (h *Handler) waitTurn(ctx context.Context, r *run, chat string, progress bool) (record, slot string, err error) {
	queue, id := r.queue, r.id
	ask := ratelimit.Ask{Chat: chat, Queue: queue, TaskID: id, Progress: progress}
	select {
	case h.waiters <- struct{}{}:
		defer func() { <-h.waiters }()
		ask.SleepMax = h.waitLong
	default:
	}
	for {
		d, err := h.limiter.Acquire(ctx, ask)
		if err != nil {
			return "", "", h.retryLater(ctx, r, "redis", err)
		}
		if ask.Progress {
			record, ask.Progress = d.Progress, false
		}
		h.metrics.RateWait.Observe(d.Wait.Seconds())
		switch d.Kind {
		case ratelimit.Go:
			return record, d.Slot, nil
		case ratelimit.Defer:
			return "", "", h.deferTask(queue, id, d.Wait)
		}
		// Again: sleep the wait, then ask once more. The slot is confirmed
		// only then, so a pause that a 429 wrote meanwhile holds this send
		// back too.
		t := time.NewTimer(d.Wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", "", ctx.Err()
		case <-h.stopping:
			// The process is shutting down: the task goes back to Redis,
			// keeping its reservation, for the rest of the fleet.
			t.Stop()
			return "", "", h.deferTask(queue, id, d.Wait)
		case <-t.C:
		}
	}
}

// deferTask hands the task back to Redis until wait has passed; the
// promoter returns it to the front of its queue then.
func (h *Handler) deferTask(queue, id string, wait time.Duration) error {
	h.metrics.Deferrals.WithLabelValues(queue).Inc()
	h.promoter.PromoteAt(queue, id, time.Now().Add(wait))
	return &laterError{Delay: wait, Reason: "rate limited"}
}

// run is what one attempt at a task knows about it.
type run struct {
	id, queue string
	attempt   int // failed attempts so far
	budget    int // failed attempts allowed after the first
	log       *slog.Logger
}

// retryLater backs off after a temporary failure, or archives the task when
// its retry budget is spent.
func (h *Handler) retryLater(ctx context.Context, r *run, reason string, err error) error {
	if r.attempt >= r.budget {
		return h.archive(ctx, r.log, "retries_exhausted",
			fmt.Errorf("%d attempts failed, the last with %s: %w", r.attempt+1, reason, err))
	}
	d := backoff(r.attempt, h.backoffBase, h.backoffCap)
	h.metrics.Retries.WithLabelValues(reason).Inc()
	r.log.Warn("temporary failure; will retry", "reason", reason, "retry_in", d, "error", err)
	h.promoter.PromoteAt(r.queue, r.id, time.Now().Add(d))
	return &laterError{Delay: d, Failure: true, Reason: reason, Err: err}
}

// archive stops retrying: the task is archived with the reason as its error,
// and the failure is appended to the durable failure log.
func (h *Handler) archive(ctx context.Context, log *slog.Logger, reason string, err error) error {
	h.metrics.Archived.WithLabelValues(reason).Inc()
	log.Error("permanent failure; archiving the task", "reason", reason, "error", err)
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if xerr := h.rdb.XAdd(xctx, &redis.XAddArgs{
		Stream: keys.Failures(),
		MaxLen: 1_000_000,
		Approx: true,
		Values: map[string]any{"task_id": id, "queue": queue, "reason": reason, "error": err.Error()},
	}).Err(); xerr != nil {
		log.Warn("could not append to the failure log", "error", xerr)
	}
	return permanent(reason, err)
}

// resolveChat follows a remembered group-to-supergroup migration. A
// migration is permanent, so positive answers are cached for good; a negative
// answer is cached briefly (a migration seen by another worker is learnt
// within that time, or from Telegram's own answer on the next send).
func (h *Handler) resolveChat(ctx context.Context, chat string) (string, error) {
	if strings.HasPrefix(chat, "@") {
		return h.resolveUsername(ctx, chat)
	}
	if !ratelimit.IsGroup(chat) {
		return chat, nil // only (non-super)groups migrate
	}
	if to, ok := h.migrations.get(chat); ok {
		return to, nil
	}
	to, err := h.rdb.HGet(ctx, keys.Migrations(), chat).Result()
	switch {
	case errors.Is(err, redis.Nil):
		h.migrations.put(chat, chat, time.Minute)
		return chat, nil
	case err != nil:
		return "", fmt.Errorf("read chat migrations: %w", err)
	}
	h.migrations.put(chat, to, 0)
	return to, nil
}

// usernameTTL is how long an @username's chat id is trusted: a username can
// pass to another chat, which is rare, so a day is plenty.
const usernameTTL = 24 * time.Hour

// resolveUsername maps an @username to its chat's numeric id (getChat, then
// remembered in Redis and in the process), so that messages to "@Name",
// "@name" and the id share one schedule. Without a ChatResolver the name is
// used as it is.
func (h *Handler) resolveUsername(ctx context.Context, chat string) (string, error) {
	if h.resolver == nil {
		return chat, nil
	}
	name := keys.NormChat(chat)
	if id, ok := h.migrations.get(name); ok {
		return id, nil
	}
	id, err := h.rdb.Get(ctx, keys.ChatID(name)).Result()
	switch {
	case err == nil:
		h.migrations.put(name, id, time.Hour)
		return id, nil
	case !errors.Is(err, redis.Nil):
		return "", fmt.Errorf("read chat id of %s: %w", name, err)
	}
	n, err := h.resolver.ChatID(ctx, chat)
	if err != nil {
		return "", err
	}
	id = strconv.FormatInt(n, 10)
	if err := h.rdb.Set(ctx, keys.ChatID(name), id, usernameTTL).Err(); err != nil {
		h.log.Warn("could not remember a chat id", "chat", name, "error", err)
	}
	h.migrations.put(name, id, time.Hour)
	return id, nil
}
