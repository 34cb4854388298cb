package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegram"
)

// Sender delivers one message to Telegram in the slot the limiter granted
// it (telegram.ErrNoSlot without one). *telegram.Client implements it; its
// errors are *telegram.Error.
type Sender interface {
	Send(ctx context.Context, g ratelimit.Grant, m telegram.Message) (telegram.Sent, error)
}

// editor edits a message the bot sent, in a slot granted as unpaid.
// *telegram.Client implements it; a Sender that does not turns thread
// edits into replies.
type editor interface {
	Edit(ctx context.Context, g ratelimit.Grant, e telegram.Edit) (telegram.Sent, error)
}

// chatResolver finds the numeric id of a chat named by @username (getChat).
// *telegram.Client implements it; its errors are *telegram.Error.
type chatResolver interface {
	ChatID(ctx context.Context, chat string) (int64, error)
}

// bot is one bot the worker serves: its Bot API client and the limiter and
// keys of its own state.
type bot struct {
	name     string
	keys     keys.Space
	sender   Sender
	resolver chatResolver // nil: @usernames are sent as they are
	editor   editor       // nil: edits go out as replies
	limiter  *ratelimit.Limiter
	paid     *paidWatch // whether its paid broadcasts are on, as this process saw last
}

// handler processes SendMessage tasks.
type handler struct {
	rdb     redis.UniversalClient
	durable *durable.Acker // replicas that must hold a send's record
	bots    map[string]*bot
	metrics *metrics
	log     *slog.Logger
	// warnLate says once that sends come later than the guard allows.
	warnLate sync.Once

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
	// ledger keeps the records of settled messages.
	ledger *ledger.Store
	// chats marks the chats that blocked a bot.
	chats *chats.Store
	// events stores the status callbacks of messages that name a
	// callback URL.
	events *statushook.Emitter
	// stops wakes the messages waiting for their slots when a cancel is
	// announced; nil: they look at their marks at their slots only.
	stops *stopWatch

	migrations migrationCache
}

// run is what one attempt at a task knows about it.
type run struct {
	broker.Task
	budget int // failed attempts allowed after the first
	log    *slog.Logger
	// bot sends the task's message; nil until the payload is read.
	bot *bot
	// d is the message on its way; nil until its chat is known.
	d *delivery
}

// botLabel is the bot's name for metrics ("" before the payload is read).
func (r *run) botLabel() string {
	if r.bot == nil {
		return ""
	}
	return r.bot.name
}

// situation starts decide's view of this attempt.
func (r *run) situation() situation { return situation{attempt: r.Attempt, budget: r.budget} }

// delivery is one message on its way: the chat it goes to, its parts and
// how far they got.
type delivery struct {
	msg    jobs.SendMessage
	chat   string
	prog   progress
	texts  []string
	modes  []markup.Mode
	loaded bool // prog, texts and modes are read
	// migrations and pauses count what this attempt met so far.
	migrations, pauses int
	// thread is the message's thread's first message (0: none), the first
	// part replies to it (replyTo) or replaces it (edit).
	thread      int
	threadPhoto bool
	replyTo     int
	edit        bool
	// lates counts the late slots given up for the part being sent, and
	// resume is the slot of a send that gave up with telegram.ErrLate, to
	// ask again with.
	lates  int
	resume string
	// paid and charged say the part being sent goes as a paid broadcast,
	// and one Telegram bills; paidRefusals counts the refusals of paid
	// broadcasts met.
	paid, charged bool
	paidRefusals  int
}

// turn is the slot a part is sent in: the limiter's grant of it (its
// name, its paid flag and the time by which the request must leave) and
// its reservation, to ask again with when the send gives up.
type turn struct {
	grant  ratelimit.Grant
	resume string
	// paid and charged are the decision's (ratelimit.Decision), made at at;
	// unpaid says it was asked for as one (ratelimit.Ask.Unpaid), whose
	// paid says nothing of whether paid broadcasts are on.
	paid, charged, unpaid bool
	at                    time.Time
}

// turnOf is the turn of a Go decision for ask, to be sent by by.
func turnOf(ask ratelimit.Ask, dc ratelimit.Decision, by, cut time.Time) turn {
	return turn{grant: dc.Grant().Until(by).CutAt(cut), resume: dc.Resume, paid: dc.Paid, charged: dc.Charged, unpaid: ask.Unpaid, at: dc.At}
}

// Handle implements broker.Handler: it sends the message's parts, each at
// its slot, and decides after each refusal what comes next.
func (h *handler) Handle(ctx context.Context, t broker.Task) error {
	r := &run{Task: t, budget: jobs.DefaultMaxRetry, log: h.log.With("task_id", t.ID, "queue", t.Queue, "attempt", t.Attempt)}
	msg, err := jobs.Decode(t.Payload)
	if err != nil {
		return h.archive(ctx, r, "invalid_payload", err)
	}
	// Herald keeps the retry budget itself (asynq's is set out of reach), so
	// that rate-limit deferrals, which are not failures, can never exhaust it.
	if msg.MaxRetry != nil {
		r.budget = *msg.MaxRetry
	}
	if r.bot = h.bots[msg.BotName()]; r.bot == nil {
		// A producer that knows a bot this worker does not: the fleet may be
		// rolling out a new bot. Retried, so nothing is lost meanwhile.
		return h.finish(ctx, r, r.situation().retry("unknown_bot", fmt.Errorf("this worker does not serve the bot %q; it serves %s",
			msg.BotName(), strings.Join(h.botNames(), ", "))))
	}
	if r.bot.name != keys.DefaultBot {
		r.log = r.log.With("bot", r.bot.name)
	}
	chat, err := h.resolveChat(ctx, r.bot, msg.Chat)
	if err != nil {
		return h.finish(ctx, r, decide(err, r.situation()))
	}
	d := &delivery{msg: msg, chat: chat}
	r.d = d
	if err := h.findThread(ctx, r, d); err != nil {
		return err
	}
	for !d.loaded || d.prog.done < len(d.texts) {
		// Every way out of the turn-taking but a granted slot ends the
		// attempt here (a cancel or a blocked chat settles the message, a
		// long wait defers it, a lost lease or a shutdown hands it back):
		// nothing goes on to the send without the slot.
		record, tn, err := h.waitTurn(ctx, r, d, !d.loaded)
		if err != nil {
			return ended(err)
		}
		if !d.loaded && h.load(r, d, record) {
			return h.announce(ctx, r, d)
		}
		if err := h.leaseHeld(ctx, r, tn); err != nil {
			return err
		}
		if err := h.sendPart(ctx, r, d, tn); err != nil {
			return err
		}
	}
	return h.announce(ctx, r, d)
}

// sendPart sends (or edits in) the part due in the turn tn granted. It
// returns nil when the delivery goes on (the part went, or it takes a new
// turn), or the attempt's outcome.
func (h *handler) sendPart(ctx context.Context, r *run, d *delivery, tn turn) error {
	h.notePaid(ctx, r, d, tn)
	var sent telegram.Sent
	var err error
	if d.editing() {
		sent, err = r.bot.editor.Edit(ctx, tn.grant, d.editOf())
		if te, ok := telegram.AsError(err); ok && te.Reason == telegram.ReasonMessageGone {
			// The thread's message was deleted or is too old to edit:
			// send this one as a new message, at the next slot.
			r.log.Info("the thread's message can no longer be edited; sending a new one", "message_id", d.thread)
			d.edit, d.thread = false, 0
			return nil
		}
	} else {
		sent, err = r.bot.sender.Send(ctx, tn.grant, d.part())
	}
	switch {
	case err == nil:
		d.lates = 0
		h.delivered(ctx, r, d, sent)
		return nil
	case errors.Is(err, telegram.ErrNoSlot), errors.Is(err, telegram.ErrPaidSlot):
		// A bug, caught before any request left: retry the message
		// rather than send it outside the limiter.
		r.log.Error("a send was attempted without its slot; nothing was sent", "error", err)
		return h.finish(ctx, r, r.situation().retry("no_slot", err))
	case errors.Is(err, telegram.ErrLate):
		// The process was too busy to send in time: nothing left. Give
		// the slot up and take a new one.
		d.lates++
		d.resume = tn.resume
		h.metrics.LateSlots.Inc()
		return nil
	}
	return h.recover(ctx, r, d, tn.grant.Slot(), err)
}

// load reads the progress record that came with the first slot and splits
// the message; it reports whether every part was sent already.
func (h *handler) load(r *run, d *delivery, record string) (done bool) {
	d.prog, d.loaded = parseProgress(record), true
	if s := d.prog.settled; s != nil {
		// Settled before this attempt: sent by a worker that died before
		// the acknowledgement, or cancelled as the task was taken.
		if s.State == ledger.StateSent {
			h.metrics.SkippedAlreadySent.Inc()
		}
		r.log.Info("the message is settled already; not sending it", "state", s.State, "parts", len(s.MessageIDs))
		return true
	}
	d.texts, d.modes = parts(d.msg, d.prog)
	if d.prog.done < len(d.texts) {
		return false
	}
	h.metrics.SkippedAlreadySent.Inc()
	r.log.Info("task was already sent; not sending again", "parts", d.prog.done)
	return true
}

// editing says the part about to go is the edit of the thread's first
// message rather than a send.
func (d *delivery) editing() bool { return d.edit && d.prog.done == 0 }

// part is the next message to send.
func (d *delivery) part() telegram.Message {
	i := d.prog.done
	m := telegram.Message{
		Chat:                d.chat,
		Text:                d.texts[i],
		ParseMode:           string(d.modes[i]),
		DisableNotification: d.msg.DisableNotification,
		ProtectContent:      d.msg.ProtectContent,
		MessageThreadID:     d.msg.MessageThreadID,
		DisableLinkPreview:  d.msg.DisableLinkPreview,
		// allow_paid_broadcast comes from the slot's grant (telegram.Client.Send).
	}
	switch {
	case i == 0:
		m.ReplyTo = d.replyTo
		m.Keyboard = keyboard(d.msg.Buttons)
		if p := d.msg.Photo; p != nil {
			m.Photo = &telegram.Photo{URL: p.URL, Data: p.Data, Name: p.Name}
		}
	case d.msg.Photo != nil:
		// The text beyond the caption follows the photo as replies.
		m.ReplyTo = d.prog.last
	}
	return m
}

// editOf is the edit that replaces the thread's first message with the
// first part.
func (d *delivery) editOf() telegram.Edit {
	return telegram.Edit{
		Chat:               d.chat,
		MessageID:          d.thread,
		Text:               d.texts[0],
		ParseMode:          string(d.modes[0]),
		Caption:            d.threadPhoto,
		Keyboard:           keyboard(d.msg.Buttons),
		DisableLinkPreview: d.msg.DisableLinkPreview,
	}
}

// keyboard converts a message's buttons for the Bot API client.
func keyboard(k *jobs.Keyboard) [][]telegram.Button {
	rows := k.Rows()
	if len(rows) == 0 {
		return nil
	}
	out := make([][]telegram.Button, len(rows))
	for i, row := range rows {
		out[i] = make([]telegram.Button, len(row))
		for j, b := range row {
			out[i][j] = telegram.Button{Text: b.Text, Data: b.Data, URL: b.URL}
		}
	}
	return out
}

// delivered records a part that Telegram accepted.
func (h *handler) delivered(ctx context.Context, r *run, d *delivery, sent telegram.Sent) {
	i := d.prog.done
	d.prog.done++
	d.prog.last = sent.MessageID
	d.prog.ids = append(d.prog.ids, sent.MessageID)
	// The thread's record first: the send record's wait for the replicas
	// (recordSent) then covers it too, as both keys live in the bot's slot.
	h.noteThread(ctx, r, d, i, sentID(sent.MessageID))
	if err := h.recordSent(ctx, r, d); err != nil {
		// Telegram has the message; without the record a redelivery would
		// send it again. Say so loudly and carry on.
		h.metrics.PossibleDuplicates.Inc()
		r.log.Error("could not record a sent message; a redelivery may duplicate it", "error", err)
	}
	outcome := "sent"
	if d.modes[i] == markup.None && markup.Mode(d.msg.ParseMode) != markup.None {
		outcome = "downgraded"
	}
	h.metrics.Sent.WithLabelValues(r.bot.name, r.Queue, outcome).Inc()
	h.paidSent(ctx, r, d)
	if i == 0 && !d.msg.CreatedAt.IsZero() {
		h.metrics.Latency.Observe(time.Since(d.msg.CreatedAt).Seconds())
	}
	r.log.Debug("sent", "part", i+1, "parts", len(d.texts), "message_id", sent.MessageID)
}

// recover carries out decide's answer to a refused part. It returns nil
// when the delivery goes on in this attempt, or the attempt's outcome.
func (h *handler) recover(ctx context.Context, r *run, d *delivery, slot string, err error) error {
	i := d.prog.done
	s := r.situation()
	s.text, s.mode, s.limit = d.texts[i], d.modes[i], limitAt(d.msg, d.prog, i)
	s.migrations, s.pauses, s.retryAfterUnit, s.paidRefusals = d.migrations, d.pauses, h.retryAfterUnit, d.paidRefusals
	a := decide(err, s)
	switch a.kind {
	case actStopPaid:
		return h.stopPaid(ctx, r, d, a)
	case actPause:
		d.pauses++
		h.metrics.TooMany.WithLabelValues(r.bot.name).Inc()
		if h.pause(ctx, r, d.chat, slot, a) {
			return nil // the next turn respects the pause; the slot is taken anew
		}
		return broker.Snooze(a.wait, a.reason)
	case actSnooze:
		h.metrics.TooMany.WithLabelValues(r.bot.name).Inc()
		return broker.Snooze(a.wait, a.reason)
	case actDowngrade, actShrink:
		return h.resplit(ctx, r, d, a)
	case actFollow:
		d.migrations++
		if err := h.rdb.HSet(ctx, r.bot.keys.Migrations(), d.chat, a.to).Err(); err != nil {
			r.log.Warn("could not remember chat migration", "error", err)
		}
		h.migrations.put(r.bot.name, d.chat, a.to, 0)
		r.log.Info("chat was migrated to a supergroup; following", "from", d.chat, "to", a.to)
		d.chat = a.to
		return nil
	}
	if a.maybeSent {
		h.metrics.PossibleDuplicates.Inc()
		r.log.Warn("telegram did not answer after the request was sent; retrying, the message may arrive twice", "error", a.err)
	}
	return h.finish(ctx, r, a)
}

// pause records a 429 in the limiter, which moves the bot's and the chat's
// schedule behind it. It reports false when the limiter could not record it.
func (h *handler) pause(ctx context.Context, r *run, chat, slot string, a action) bool {
	p, err := r.bot.limiter.Penalize(ctx, chat, slot, a.wait)
	if err != nil {
		r.log.Warn("could not record 429 in the limiter", "error", err)
		return false
	}
	h.metrics.Pauses.WithLabelValues(r.bot.name, p.Scope()).Inc()
	h.metrics.PauseSeconds.WithLabelValues(r.bot.name, p.Scope()).Observe(max(p.Bot, p.Chat).Seconds())
	r.log.Warn("telegram answered 429; pausing", "retry_after", a.err.(*telegram.Error).RetryAfter, "scope", p.Scope(),
		"bot_pause", p.Bot, "chat_pause", p.Chat, "schedule_shift", p.Shift, "requeued", p.Requeued)
	return true
}

// resplit splits the rest of the message again, as plain text or shorter,
// and remembers it: the resend may wait for the chat's next turn, in a later
// attempt.
func (h *handler) resplit(ctx context.Context, r *run, d *delivery, a action) error {
	i := d.prog.done
	if a.kind == actDowngrade {
		d.prog.resplits = append(d.prog.resplits, resplit{from: i, plain: true, limit: limitAt(d.msg, d.prog, i)})
		r.log.Warn("telegram could not parse the markup; resending as plain text", "part", i+1, "error", a.err)
	} else {
		d.prog.resplits = append(d.prog.resplits, resplit{from: i, plain: d.modes[i] == markup.None, limit: a.limit})
		r.log.Warn("telegram refused a part as too long; splitting the rest smaller", "part", i+1, "limit", a.limit)
	}
	d.texts, d.modes = parts(d.msg, d.prog)
	if err := h.saveProgress(ctx, r, d); err != nil {
		return h.finish(ctx, r, decide(storeError{err}, r.situation()))
	}
	return nil
}

// finish ends the attempt with a retry after backoff or an archive. A
// replication barrier that failed (notReplicated) is neither: nothing was
// sent, and the task is handed back without spending its retry budget.
func (h *handler) finish(ctx context.Context, r *run, a action) error {
	var nr notReplicated
	if errors.As(a.err, &nr) {
		return h.replicasBehind(r, nr)
	}
	switch a.kind {
	case actArchive:
		return h.archive(ctx, r, a.reason, a.err)
	case actBlock:
		return h.block(ctx, r, a.err)
	}
	d := backoff(r.Attempt, h.backoffBase, h.backoffCap)
	h.metrics.Retries.WithLabelValues(r.botLabel(), a.reason).Inc()
	r.log.Warn("temporary failure; will retry", "reason", a.reason, "retry_in", d, "error", a.err)
	return broker.Retry(d, a.reason, a.err)
}

// FinishedRecordTTL is the shortest time the record of a message whose
// every part was sent must be kept: it has to outlive a redelivery of the
// task, which can come after the send and before asynq's acknowledgement:
// from the lease sweeper (15 s), asynq's recoverer (at most 90 s) or a Redis
// restart in between. An hour covers those. The record is the ledger's
// (internal/ledger), kept for its retention, which is at least this; a
// record of a message with parts still to send lives for SentRetention, as
// its task may be retried (or run again from the web UI) for that long.
const FinishedRecordTTL = time.Hour

// saveProgress writes the message's send record: its progress, or once
// every part is sent the ledger's record of it.
func (h *handler) saveProgress(ctx context.Context, r *run, d *delivery) error {
	// A fresh context: a cancelled attempt must still record a send that
	// Telegram accepted, or the task would be sent twice.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	value, ttl := d.prog.encode(d.prog.last), h.sentRetention
	if d.prog.done == len(d.texts) {
		if d.prog.settled == nil {
			rec := h.settledRecord(r, ledger.StateSent)
			d.prog.settled = &rec
		}
		value, ttl = d.prog.settled.Encode(), h.ledger.Retention()
	}
	// One command either way: a broadcast's message keeps its broadcast's
	// counts in the same script (ledger.Store.Write).
	return h.ledger.Write(ctx, r.bot.name, r.ID, value, ttl)
}

// settledRecord is the ledger's record of the run's message, settled as
// state now.
func (h *handler) settledRecord(r *run, state ledger.State) ledger.Record {
	rec := ledger.Record{State: state, Queue: r.Queue, Attempts: r.Attempt, Settled: time.Now().UnixMilli()}
	if d := r.d; d != nil {
		rec.Chat, rec.From, rec.Created, rec.Topic = d.chat, d.msg.From, ledger.Millis(d.msg.CreatedAt), d.msg.MessageThreadID
		if strings.HasPrefix(d.msg.Chat, "@") {
			rec.Username = d.msg.Chat
		}
		rec.MessageIDs = d.prog.ids
		if state != ledger.StateSent && d.prog.done > 0 {
			rec.Progress = d.prog.encode(d.prog.last)
		}
	}
	return rec
}

// recordSent records a part that Telegram accepted. Redis may be away for a
// moment (a restart, a failover): the record is retried, every 250 ms at
// most, for broker's RecordWindow, so that it lands as soon as there is a
// master again, ahead of the lease sweep that may hand the task on, and a
// redelivery finds it and does not send again.
func (h *handler) recordSent(ctx context.Context, r *run, d *delivery) error {
	deadline := time.Now().Add(h.recordWindow)
	wait := 50 * time.Millisecond
	for {
		err := h.saveProgress(ctx, r, d)
		if err == nil {
			err = h.confirmSent(ctx, r)
		}
		if err == nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		r.log.Warn("could not record a sent message yet; retrying", "retry_in", wait, "error", err)
		time.Sleep(wait)
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// confirmSent waits until the replicas that Durable asks for hold the send's
// record, so that a failover right after the acknowledgement does not lose
// it and send the message again.
func (h *handler) confirmSent(ctx context.Context, r *run) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return h.durable.Wait(ctx, r.bot.keys.Sent(r.ID))
}

// waitTurn waits for the message's send slot: it sleeps through waits that
// the limiter answers with Again and defers the task for longer ones. A
// task that holds one of the process's waiter places may sleep through
// waits of up to waitLong in memory, which saves the round trip of a
// deferral through Redis. It returns the task's progress record (read with
// the decision when progress is set), the slot that the send uses, and the
// time by which the send must leave (zero: no bound; see turn).
func (h *handler) waitTurn(ctx context.Context, r *run, d *delivery, progress bool) (record string, t turn, err error) {
	queue, id, lim, chat := r.Queue, r.ID, r.bot.limiter, d.chat
	// An edit cannot carry allow_paid_broadcast: its slot must keep to the
	// bot's free limit.
	ask := ratelimit.Ask{Chat: chat, Queue: queue, TaskID: id, Progress: progress, Ahead: true, Resume: d.resume,
		Unpaid: d.editing() || !d.msg.MayPay()}
	d.resume = ""
	select {
	case h.waiters <- struct{}{}:
		defer func() { <-h.waiters }()
		ask.SleepMax = h.waitLong
	default:
	}
	lt := lateness{h: h, d: d, late: lim.Config().EffectiveGuard() / 2}
	for {
		// The slot is a time on Redis' clock, taken between asked (after
		// the replication barrier) and the reply; slotOnClock puts it on
		// this worker's: a send never wakes before it and is late from it.
		asked, dc, err := h.acquire(ctx, r, ask)
		replied := time.Now()
		if err != nil {
			return "", turn{}, h.finish(ctx, r, decide(storeError{err}, r.situation()))
		}
		ask.Resume = ""
		if ask.Progress {
			record, ask.Progress = dc.Progress, false
		}
		switch dc.Kind {
		case ratelimit.Blocked, ratelimit.Cancelled:
			return "", turn{}, h.stopped(ctx, r, dc.Kind)
		case ratelimit.Defer:
			h.metrics.RateWait.Observe(dc.Wait.Seconds())
			return "", turn{}, h.deferTask(queue, dc.Wait)
		}
		h.metrics.RateWait.Observe(dc.Wait.Seconds())
		wake, due := slotOnClock(asked, replied, dc)
		if dc.Kind == ratelimit.Go && dc.Wait <= 0 {
			if !lt.tooLate(time.Since(due)) {
				return record, turnOf(ask, dc, lt.by(due), lt.cut(due)), nil
			}
			// The slot was more than half the guard past when the answer
			// came, and the sends reserved after it count from it. Ask
			// again with it; the limiter gives a new one.
			ask.Resume = dc.Resume
			continue
		}
		if k, err := h.sleepUntil(ctx, r, chat, wake); err != nil {
			return "", turn{}, h.sleepCut(ctx, r, dc.Resume, wake, err)
		} else if k != 0 {
			h.giveBack(ctx, r, ask, dc.Resume)
			return "", turn{}, h.stopped(ctx, r, k)
		}
		if dc.Kind == ratelimit.Go {
			// The slot was handed out ahead: use it unless it moved (a 429
			// pause, a priority message) or it is by now more than half the
			// guard past (the other half covers the trip to Telegram).
			k, err := h.confirm(ctx, r, chat, dc)
			switch {
			case err != nil:
				return "", turn{}, h.finish(ctx, r, decide(storeError{err}, r.situation()))
			case k == ratelimit.Blocked, k == ratelimit.Cancelled:
				h.giveBack(ctx, r, ask, dc.Resume)
				return "", turn{}, h.stopped(ctx, r, k)
			case k == ratelimit.Go && !lt.tooLate(time.Since(due)):
				return record, turnOf(ask, dc, lt.by(due), lt.cut(due)), nil
			}
		}
		// Again (or a slot that moved): ask once more with the reservation
		// held in memory; the slot is confirmed only then, so a pause that a
		// 429 wrote meanwhile holds this send back too.
		ask.Resume = dc.Resume
	}
}

// giveBack returns the slot a message held in memory (resume) and will not
// use, stopped by a mark: asked again with it, the limiter finds the mark
// and gives the slot and the turns back, so that no message waits behind a
// send that will never happen. Best effort: a slot not given back only
// spaces the next sends more.
func (h *handler) giveBack(ctx context.Context, r *run, ask ratelimit.Ask, resume string) {
	if resume == "" {
		return
	}
	ask.Resume, ask.Progress = resume, false
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if _, err := r.bot.limiter.Acquire(gctx, ask); err != nil {
		r.log.Debug("could not give back the slot of a stopped message", "error", err)
	}
}

// sleepCut ends a wait for a slot due at due that err cut short: the task
// goes back to Redis, keeping the reservation it held in memory (resume)
// for the rest of the fleet, deferred until the slot when the worker is
// stopping.
func (h *handler) sleepCut(ctx context.Context, r *run, resume string, due time.Time, err error) error {
	h.hold(ctx, r, resume)
	if errors.Is(err, errStopping) {
		return h.deferTask(r.Queue, max(time.Until(due), 0))
	}
	return err
}

// lateness decides, for one send, which slots come too late to use: those
// woken up to (or answered) more than half the guard after their time.
type lateness struct {
	h    *handler // its metrics count the slots given up
	d    *delivery
	late time.Duration // half the limiter's guard
}

// tooLate reports whether a slot woken up to (or answered) after l is to
// be given up. A send is late past half the guard (the other half covers
// the trip to Telegram). Once it has given up maxLateRetries slots, it may
// use up to three quarters of the guard: a send later than the whole guard
// could come closer to the sends reserved after it than the window allows,
// which is how a loaded machine met a 429. Once it has given up
// maxLateForced slots, a late one is used whatever its lateness, with a
// warning: a Redis or a machine slower than the guard must not keep a
// message from ever being sent, and the guard should be raised.
func (lt lateness) tooLate(l time.Duration) bool {
	switch {
	case lt.d.lates >= maxLateForced:
		if l > lt.allowed() {
			lt.h.warnLate.Do(func() {
				lt.h.log.Warn("sends keep coming later than the limiter's guard allows; this one goes late and may meet a 429: raise "+ratelimit.EnvLimitGuard,
					"late", l.Round(time.Millisecond), "guard", (2 * lt.late).String())
			})
		}
		return false
	case l <= lt.allowed():
		return false
	}
	lt.d.lates++
	lt.h.metrics.LateSlots.Inc()
	return true
}

// allowed is how late this send may use its slot: half the guard, three
// quarters of it after maxLateRetries slots given up.
func (lt lateness) allowed() time.Duration {
	if lt.d.lates >= maxLateRetries {
		return lt.late * 3 / 2
	}
	return lt.late
}

// by is the send-by time of a slot due at due: allowed after it, or no
// bound once maxLateForced slots were given up.
func (lt lateness) by(due time.Time) time.Time {
	if lt.d.lates >= maxLateForced {
		return time.Time{}
	}
	return due.Add(lt.allowed())
}

// cut is the cut-off of a slot due at due (ratelimit.Grant.CutOff): seven
// eighths of the guard after it, past which the request is not sent even
// on a warm connection, or no bound once maxLateForced slots were given
// up.
func (lt lateness) cut(due time.Time) time.Time {
	if lt.d.lates >= maxLateForced {
		return time.Time{}
	}
	return due.Add(lt.late * 7 / 4)
}

// botNames lists the bots the handler serves, sorted.
func (h *handler) botNames() []string {
	names := make([]string, 0, len(h.bots))
	for name := range h.bots {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// maxLateRetries is how many slots one send gives up for being late by
// half the guard before it may use three quarters of it, and maxLateForced
// how many before it uses a late one, however late.
const (
	maxLateRetries = 2
	maxLateForced  = 8
)

// errStopping ends a sleep when the process shuts down.
var errStopping = errors.New("worker is stopping")

// sleep waits for d, the end of ctx or the process's shutdown.
func (h *handler) sleep(ctx context.Context, d time.Duration) error {
	return h.sleepOr(ctx, d, nil)
}

// errNotice ends a sleep that a stop notice woke (stopWatch).
var errNotice = errors.New("a cancel was announced")

// sleepOr is sleep that a notice on wake also ends (errNotice).
func (h *handler) sleepOr(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-h.stopping:
		return errStopping
	case <-wake:
		return errNotice
	case <-t.C:
		return nil
	}
}

// sleepUntil sleeps until due, waking at each announced cancel to look at
// the message's marks (Limiter.Marks): it returns the mark's kind when one
// stops the message, 0 when due has come. Its slot is not touched: after
// due the caller confirms it as before.
func (h *handler) sleepUntil(ctx context.Context, r *run, chat string, due time.Time) (ratelimit.Kind, error) {
	for {
		var wake <-chan struct{}
		if h.stops != nil {
			wake = h.stops.notices()
		}
		err := h.sleepOr(ctx, time.Until(due), wake)
		if !errors.Is(err, errNotice) {
			return 0, err
		}
		k, err := r.bot.limiter.Marks(ctx, chat, r.ID)
		if err != nil {
			r.log.Debug("could not look at the message's marks; they are looked at again at its slot", "error", err)
			continue
		}
		if k != 0 {
			return k, nil
		}
	}
}

// deferTask hands the task back to Redis until wait has passed; it returns
// to the front of its queue then.
func (h *handler) deferTask(queue string, wait time.Duration) error {
	h.metrics.Deferrals.WithLabelValues(queue).Inc()
	return broker.Snooze(wait, "rate limited")
}

// errSettled ends an attempt whose message was settled without a send (a
// cancel): the task is done. It never leaves the handler (ended).
var errSettled = errors.New("the message is settled; nothing to send")

// ended is the task's outcome for an attempt that the turn-taking ended:
// nil (done) for a message it settled, the outcome itself otherwise.
func ended(err error) error {
	if errors.Is(err, errSettled) {
		return nil
	}
	return err
}

// stopped settles a message that a mark stopped before its send: archived
// as chat_blocked, or cancelled. Its error always ends the attempt
// (errSettled for a cancel).
func (h *handler) stopped(ctx context.Context, r *run, k ratelimit.Kind) error {
	if k == ratelimit.Blocked {
		return h.archive(ctx, r, ledger.ReasonChatBlocked, h.blockedError(ctx, r))
	}
	h.metrics.Cancelled.WithLabelValues(r.botLabel()).Inc()
	r.log.Info("the message was cancelled; not sending it")
	rec := h.settledRecord(r, ledger.StateCancelled)
	rec.Reason = "cancelled"
	if d := r.d; d != nil && d.loaded {
		d.prog.settled = &rec
	}
	h.settle(ctx, r, rec)
	return errSettled
}

// block marks the chat of a send that Telegram refused with a 403 for good
// (the user blocked the bot, the bot was removed) blocked, fleet-wide, so
// that later messages to it fail without a request, and fails this one as
// chat_blocked with Telegram's words.
func (h *handler) block(ctx context.Context, r *run, err error) error {
	if r.d == nil {
		// Refused while the chat was being looked up: no chat to mark yet.
		return h.archive(ctx, r, ledger.ReasonChatBlocked, err)
	}
	tg, _ := telegram.AsError(err)
	_, kicked := tg.ChatGone()
	b := chats.Block{Since: time.Now().UTC(), Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403, Error: shown(err).Error()}
	if kicked {
		b.Reason = chats.ReasonKicked
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	first, berr := h.chats.Block(bctx, r.bot.name, r.d.chat, b)
	switch {
	case berr != nil:
		r.log.Warn("could not mark the chat blocked; its next messages will ask Telegram again", "error", berr)
	case first:
		r.log.Warn("the chat blocked the bot or removed it; its messages fail until it comes back", "reason", b.Reason)
		h.emitBlocked(ctx, r, b)
	}
	return h.archive(ctx, r, ledger.ReasonChatBlocked, err)
}

// blockedError says why a message to a chat marked blocked was not sent,
// with what the mark records (Telegram's 403, or the update that said so).
func (h *handler) blockedError(ctx context.Context, r *run) error {
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	why := "the chat blocked the bot or removed it"
	if st, err := h.chats.Get(gctx, r.bot.name, r.d.chat); err == nil && st.Blocked {
		why = fmt.Sprintf("the chat is marked blocked (%s, from %s", st.Reason, st.Source)
		if st.Since != nil {
			why += " since " + st.Since.UTC().Format(time.RFC3339)
		}
		if st.Error != "" {
			why += ": " + st.Error
		}
		why += ")"
	}
	return fmt.Errorf("%s; not sent, and no request was made; messages to it are sent again once the chat is back (GET /v1/chats/%s/%s)",
		why, r.bot.name, r.d.chat)
}

// settle writes the ledger's record of a message settled without a send
// (failed, cancelled). A record that cannot be written is logged: the task's
// own state (archived, done) still tells the web UI what happened.
func (h *handler) settle(ctx context.Context, r *run, rec ledger.Record) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := h.ledger.Put(sctx, r.botLabel(), r.ID, rec); err != nil {
		r.log.Warn("could not record the message's state in the ledger", "state", rec.State, "error", err)
	}
}

// archive stops retrying: the task is archived with the reason as its error,
// its ledger record says failed, and the failure is appended to the durable
// failure log.
func (h *handler) archive(ctx context.Context, r *run, reason string, err error) error {
	h.metrics.Archived.WithLabelValues(r.botLabel(), reason).Inc()
	r.log.Error("permanent failure; archiving the task", "reason", reason, "error", err)
	rec := h.settledRecord(r, ledger.StateFailed)
	rec.Reason, rec.Error = reason, shown(err).Error()
	h.settle(ctx, r, rec)
	h.keepFailed(ctx, r)
	h.emitFailed(ctx, r, rec)
	xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if xerr := h.rdb.XAdd(xctx, &redis.XAddArgs{
		Stream: keys.Failures(),
		MaxLen: 1_000_000,
		Approx: true,
		Values: map[string]any{"task_id": r.ID, "queue": r.Queue, "bot": r.botLabel(), "reason": reason, "error": err.Error()},
	}).Err(); xerr != nil {
		r.log.Warn("could not append to the failure log", "error", xerr)
	}
	return broker.Archive(reason, shown(err))
}
