package worker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
)

// threadPoll is how long a reply or edit whose thread's first message is
// still queued waits before it looks again.
const threadPoll = 2 * time.Second

// findThread reads the first message of the message's thread, for a reply
// or an edit. While that message is accepted but not yet sent, the task
// waits for it (handed back to Redis, not a failure) for up to
// jobs.ThreadWait from its creation; without one, or after that, the
// message goes out on its own.
func (h *handler) findThread(ctx context.Context, r *run, d *delivery) error {
	t := d.msg.Thread
	if t == nil || t.Mode == jobs.ThreadOpen {
		return nil
	}
	v, err := h.rdb.Get(ctx, r.bot.keys.Thread(d.msg.Chat, t.Key)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		return h.finish(ctx, r, decide(storeError{err}, r.situation()))
	}
	if v == "pending" {
		if d.msg.CreatedAt.IsZero() || time.Since(d.msg.CreatedAt) < jobs.ThreadWait {
			r.log.Debug("the thread's first message is not sent yet; waiting for it", "thread", t.Key)
			return broker.Snooze(threadPoll, "waiting for the thread's first message")
		}
		r.log.Warn("the thread's first message was not sent in time; sending on its own", "thread", t.Key)
		return nil
	}
	id, kind, _ := strings.Cut(v, ":")
	n, err := strconv.Atoi(id)
	if err != nil || n <= 0 {
		r.log.Warn("unreadable thread record; sending on its own", "thread", t.Key, "record", v)
		return nil
	}
	d.thread, d.threadPhoto = n, kind == "p"
	if t.Mode == jobs.ThreadEdit && r.bot.editor != nil {
		d.edit = true
	} else {
		d.replyTo = n
	}
	return nil
}

// noteThread keeps the thread's record after part i went out: the first
// part of the message that opens a thread becomes its first message, and a
// message that closes the thread forgets it once its last part is sent.
// Failing to write only loses the threading of later messages, so it is
// logged, not retried. The caller's wait for the send record's replicas,
// which comes next and is on the same hash slot, covers this write too.
func (h *handler) noteThread(ctx context.Context, r *run, d *delivery, i int, sent sentID) {
	t := d.msg.Thread
	if t == nil {
		return
	}
	key := r.bot.keys.Thread(d.msg.Chat, t.Key)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	var err error
	switch {
	case t.Close && d.prog.done == len(d.texts):
		err = h.rdb.Del(ctx, key).Err()
	case i == 0 && t.Mode == jobs.ThreadOpen && sent > 0:
		kind := "t"
		if d.msg.Photo != nil {
			kind = "p"
		}
		err = h.rdb.Set(ctx, key, strconv.Itoa(int(sent))+":"+kind, jobs.ThreadRetention).Err()
	default:
		return
	}
	if err != nil {
		r.log.Warn("could not update the thread's record; later replies may go out on their own", "thread", t.Key, "error", err)
	}
}

// sentID is the id of a message Telegram accepted.
type sentID int
