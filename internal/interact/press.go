package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/amsilence"
	"github.com/herald-dev/herald/internal/backoff"
	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/escalation"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/silences"
	"github.com/herald-dev/herald/internal/telegram"
)

// silenceStore creates silences; *silences.Store implements it.
type silenceStore interface {
	Create(ctx context.Context, in silences.Input) (silences.Silence, error)
	List(ctx context.Context, f silences.Filter) ([]silences.Silence, error)
}

var _ silenceStore = (*silences.Store)(nil)

// acknowledger stops escalations; *escalation.Store implements it.
type acknowledger interface {
	Acknowledge(ctx context.Context, a escalation.Ack) (escalation.Acked, error)
}

var _ acknowledger = (*escalation.Store)(nil)

// Defaults of handlerConfig.
const (
	// defaultPressRetention is how long a press is remembered by its
	// callback query id: far longer than Telegram redelivers an update.
	defaultPressRetention = 24 * time.Hour
	// defaultAnswerWindow is how long after Herald received a press a
	// failed answer (a network error, a 5xx) is still retried: Telegram
	// takes answers for a short while only.
	defaultAnswerWindow = 30 * time.Second
	// defaultHandlerBackoffBase and defaultHandlerBackoffCap shape the
	// retries after Redis errors.
	defaultHandlerBackoffBase = time.Second
	defaultHandlerBackoffCap  = time.Minute
	// defaultMaxLines is how many lines presses may add below one message
	// (the latest are kept).
	defaultMaxLines = 10
	// defaultPressRetry is how many failed attempts after the first a
	// press that is not recorded yet gets before its task is archived.
	defaultPressRetry = 20
)

// handlerConfig configures the handler of TypeUpdate tasks.
type handlerConfig struct {
	// Redis holds the subjects, the press records and the
	// acknowledgements. Required.
	Redis redis.UniversalClient
	// Bots are the Bot API clients, by bot name, that answer presses.
	// Required; a task of a bot missing here is retried (the fleet may be
	// mid-rollout).
	Bots map[string]bot
	// Edits queues the edits that show a press on its message. Required:
	// an edit is a message like any other, under the fleet's limits.
	Edits *jobs.Enqueuer
	// EditQueue is the queue of those edits; "" means the Enqueuer's
	// default for the bot.
	EditQueue string
	// Silences creates the silences of the silence buttons; nil answers
	// them with "Silences are not available here".
	Silences silenceStore
	// Chats holds the blocked chats that my_chat_member updates mark and
	// clear; default a chats.Store on Redis that counts nothing.
	Chats *chats.Store
	// OnBlocked, when set, is told of each chat that an update newly
	// marked blocked (the chat.blocked callback); an error retries the
	// update's task.
	OnBlocked blockedHook
	// Escalations, when set, stops the escalation of an acknowledged
	// alert (and tells when it fired).
	Escalations acknowledger
	// Commands, when set, answers the commands of messages (/oncall);
	// without it messages are ignored.
	Commands commander
	// Durable, when set, is waited on after a press is recorded and
	// before it is answered.
	Durable *durable.Acker
	// PressRetention is how long a press is remembered (default
	// defaultPressRetention); AckRetention how long an acknowledgement is
	// (default jobs.ThreadRetention, as long as the thread).
	PressRetention time.Duration
	AckRetention   time.Duration
	// AnswerWindow bounds the retries of a failed answer (default
	// defaultAnswerWindow).
	AnswerWindow time.Duration
	// BackoffBase and BackoffCap shape the retries after Redis errors
	// (defaults defaultHandlerBackoffBase and defaultHandlerBackoffCap).
	BackoffBase, BackoffCap time.Duration
	// MaxLines bounds the lines shown below a message (default
	// defaultMaxLines).
	MaxLines int
	// MaxRetry is how many failed attempts after the first a press gets
	// before it is recorded (default defaultPressRetry): by then it is
	// stale. A recorded press is retried until it is done, however long
	// Redis or the silences store fail.
	MaxRetry int
	// Alertmanager creates the silences an acknowledgement makes in the
	// Alertmanager an alert came from (callbacks.Subject.Alertmanager);
	// default an amsilence.Client.
	Alertmanager amSilencer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics count the presses; nil: unregistered ones.
	Metrics *metrics
	// Now is the clock of acknowledgements and silences; default time.Now.
	Now func() time.Time
}

// withDefaults fills the zero fields.
func (c handlerConfig) withDefaults() handlerConfig {
	if c.PressRetention == 0 {
		c.PressRetention = defaultPressRetention
	}
	if c.AckRetention == 0 {
		c.AckRetention = jobs.ThreadRetention
	}
	if c.AnswerWindow == 0 {
		c.AnswerWindow = defaultAnswerWindow
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = defaultHandlerBackoffBase
	}
	if c.BackoffCap == 0 {
		c.BackoffCap = defaultHandlerBackoffCap
	}
	if c.MaxLines == 0 {
		c.MaxLines = defaultMaxLines
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = defaultPressRetry
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Alertmanager == nil {
		c.Alertmanager = &amsilence.Client{}
	}
	if c.Chats == nil && c.Redis != nil {
		c.Chats = chats.NewStore(c.Redis)
	}
	c.Metrics = c.Metrics.orNew()
	return c
}

func (c handlerConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("interact: "+format, args...)) }
	if c.Redis == nil {
		bad("HandlerConfig.Redis is required")
	}
	if len(c.Bots) == 0 {
		bad("HandlerConfig.Bots is required: the Bot API client of each bot whose presses this worker answers")
	}
	for name, b := range c.Bots {
		if b == nil || !keys.ValidBotName(name) {
			bad("HandlerConfig.Bots[%q] is nil or not a bot name", name)
		}
	}
	if c.Edits == nil {
		bad("HandlerConfig.Edits is required: the edits that show a press are queued like any message")
	}
	if c.PressRetention < time.Minute || c.AckRetention < time.Minute {
		bad("HandlerConfig.PressRetention (%v) and AckRetention (%v) must be at least 1m (defaults %v and %v)",
			c.PressRetention, c.AckRetention, defaultPressRetention, jobs.ThreadRetention)
	}
	if c.AnswerWindow < 0 {
		bad("HandlerConfig.AnswerWindow is %v; use a positive duration (default %v)", c.AnswerWindow, defaultAnswerWindow)
	}
	if c.BackoffBase <= 0 || c.BackoffCap < c.BackoffBase {
		bad("HandlerConfig.BackoffBase (%v) must be positive and at most BackoffCap (%v)", c.BackoffBase, c.BackoffCap)
	}
	if c.MaxLines < 1 {
		bad("HandlerConfig.MaxLines is %d; use at least 1 (default %d)", c.MaxLines, defaultMaxLines)
	}
	if c.MaxRetry < 0 {
		bad("HandlerConfig.MaxRetry is %d; use 0 for the default %d, or more", c.MaxRetry, defaultPressRetry)
	}
	return errors.Join(errs...)
}

// handler handles TypeUpdate tasks: it acts on button presses.
type handler struct {
	cfg handlerConfig
	rdb redis.UniversalClient
	log *slog.Logger
	// names are the bots' usernames, which commands in groups name.
	names usernames
}

// newHandler checks cfg and returns a handler.
func newHandler(cfg handlerConfig) (*handler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &handler{cfg: cfg, rdb: cfg.Redis, log: cfg.Logger.With("component", "presses")}, nil
}

var _ broker.Handler = (*handler)(nil)

// press is one attempt at handling a press.
type press struct {
	task     broker.Task
	bot      string
	keys     keys.Space
	api      bot
	q        *telegram.CallbackQuery
	received time.Time
	log      *slog.Logger

	action string
	ref    string
	subj   buttons.Subject
	// recorded is set once the press is recorded (by this attempt or an
	// earlier one of the task); resumed when an earlier attempt recorded
	// it and did not finish it.
	recorded, resumed bool
	// answerClaimed is set once it is settled whether this task answers
	// the query (answerer): one task does, fleet-wide.
	answerClaimed, answerer bool
	// incident names the firing of the alert the press acts on (see
	// incidentOf), as the press record keeps it.
	incident string
	// direct is set for a press in the presser's private chat, where an
	// escalation sent the alert's buttons (chatDirect).
	direct bool
	// byName, when set, names who acted in place of the presser: the
	// tool of an acknowledgement from the alert's source (sourceack.go).
	byName string
}

// by is how the presser is named in lines, answers and silences: see
// telegram.UpdateUser.Name.
func (p *press) by() string {
	if p.byName != "" {
		return p.byName
	}
	return p.q.From.Name()
}

// incidentOf names what an acknowledgement and the lines below the message
// belong to: one firing of the alert in its chat. A thread key is reused
// each time the alert fires again after resolving, so the name adds the id
// of the thread's first message (the one pressed once the thread is
// closed): last week's acknowledgement does not answer today's press.
func (h *handler) incidentOf(ctx context.Context, p *press) (string, error) {
	base := "ref:" + p.ref
	if p.subj.ThreadKey != "" {
		base = p.subj.ThreadKey
		v, err := h.rdb.Get(ctx, p.keys.Thread(p.subj.Chat, p.subj.ThreadKey)).Result()
		switch {
		case err == nil:
			if id, _, ok := strings.Cut(v, ":"); ok {
				return base + "#" + id, nil
			}
		case !errors.Is(err, redis.Nil):
			return "", err
		}
	}
	if m := p.q.Message; m != nil && m.MessageID > 0 {
		return base + "#" + strconv.Itoa(m.MessageID), nil
	}
	return base, nil
}

// Handle implements broker.Handler.
func (h *handler) Handle(ctx context.Context, t broker.Task) error {
	pl, err := decodePayload(t.Payload)
	if err != nil {
		return broker.Archive("invalid_payload", err)
	}
	if m := pl.Update.MyChatMember; m != nil {
		return h.member(ctx, t, pl, m)
	}
	if m := pl.Update.Message; m != nil {
		return h.command(ctx, t, pl.Bot, m)
	}
	q := pl.Update.CallbackQuery
	if q == nil || q.ID == "" {
		// Only callback queries, my_chat_member and messages are asked
		// for; anything else is ignored.
		return nil
	}
	p := &press{task: t, bot: pl.Bot, keys: keys.Bot(pl.Bot), q: q, received: pl.ReceivedAt,
		log: h.log.With("task_id", t.ID, "bot", pl.Bot, "update_id", pl.Update.UpdateID, "query", q.ID,
			"user", q.From.Name(), "user_id", q.From.ID, "attempt", t.Attempt)}
	if p.api = h.cfg.Bots[pl.Bot]; p.api == nil {
		// A fleet mid-rollout: another worker may serve the bot.
		return h.retry(p, "unknown_bot", fmt.Errorf("this worker does not answer the presses of the bot %q", pl.Bot))
	}
	return h.handle(ctx, p)
}

// handle checks the press and hands a permitted one to accept.
func (h *handler) handle(ctx context.Context, p *press) error {
	action, ref, ok := buttons.ParseData(p.q.Data)
	if !ok {
		p.log.Info("press of a button that is not Herald's; answered without text", "data", p.q.Data)
		h.count(p, "none", outcomeUnknown)
		return h.answer(ctx, p, "", false)
	}
	p.action, p.ref = action, ref
	p.log = p.log.With("action", action, "ref", ref)
	subj, err := buttons.Load(ctx, h.rdb, p.bot, ref)
	switch {
	case errors.Is(err, buttons.ErrUnknown):
		p.log.Info("press of an alert no longer tracked")
		h.count(p, action, outcomeUnknown)
		return h.answer(ctx, p, answerUntracked, false)
	case err != nil:
		return h.retry(p, "redis", err)
	case !slices.Contains(subj.Actions, action):
		p.log.Warn("press of an action the alert's buttons do not offer", "actions", subj.Actions)
		h.count(p, action, outcomeUnknown)
		return h.answer(ctx, p, answerUntracked, false)
	}
	p.subj = subj
	p.log = p.log.With("alert", subj.Alert, "chat", subj.Chat)
	where, err := h.checkChat(ctx, p)
	switch {
	case err != nil:
		return h.retry(p, "redis", err)
	case where == chatOther:
		return h.refuse(ctx, p, answerRefused, "press refused: the message is in another chat than the alert's (forwarded?)",
			"pressed_in", p.q.Message.Chat.ID)
	case where == chatUnsure:
		return h.refuse(ctx, p, answerUnsureChat, "press refused: cannot tell that it comes from the alert's chat "+
			"(an inline message, or the chat id of the alert's @chat is no longer known)", "has_message", p.q.Message != nil)
	case where == chatDirect:
		// The escalation chose this person and messaged them the buttons.
		p.direct = true
		p.log = p.log.With("pressed_in", "direct message")
	case !subj.Allows(p.q.From.ID, p.q.From.Username):
		return h.refuse(ctx, p, answerRefused, "press refused: the user is not among the alert's allowed users")
	}
	return h.accept(ctx, p)
}

// refuse answers a press it will not act on with answer, as an alert, and
// counts and logs it (why, with attrs).
func (h *handler) refuse(ctx context.Context, p *press, answer, why string, attrs ...any) error {
	p.log.Warn(why, attrs...)
	h.count(p, p.action, outcomeRefused)
	return h.answer(ctx, p, answer, true)
}

// record is what the press record (keys.Space.CallbackQuery, a hash)
// says about how far a press got.
type record struct {
	answer   string // the answer decided once the action is done
	alert    bool   // answer as an alert
	line     string // the line to show below the message; "" none
	silence  string // the id of the silence created
	incident string // see press.incident
	answered bool
	edited   bool
}

// Fields of the press record besides those claimScript writes.
const (
	fieldAnswer   = "answer"
	fieldAlert    = "alert"
	fieldLine     = "line"
	fieldSilence  = "silence"
	fieldIncident = "incident"
	fieldAnswered = "answered"
	fieldEdited   = "edited"
	fieldDone     = "done"
)

// accept records a permitted press once and carries it out: the action,
// the answer, the edit. Each step notes in the record that it is done, so
// that a retried task resumes where the last attempt stopped.
func (h *handler) accept(ctx context.Context, p *press) error {
	ctx = durable.Track(ctx)
	key := p.keys.CallbackQuery(p.q.ID)
	if stop, err := h.claim(ctx, p, key); stop || err != nil {
		return err
	}
	rec, err := h.loadRecord(ctx, key)
	if err != nil {
		return h.retry(p, "redis", err)
	}
	if rec.incident == "" {
		// Kept at once: every later step, and a retry, acts on this firing.
		if rec.incident, err = h.incidentOf(ctx, p); err != nil {
			return h.retry(p, "redis", err)
		}
		if err := h.rdb.HSet(ctx, key, fieldIncident, rec.incident).Err(); err != nil {
			return h.retry(p, "redis", err)
		}
	}
	p.incident = rec.incident
	if rec.answer == "" {
		if err := h.act(ctx, p, &rec); err != nil {
			return err
		}
		if err := h.rdb.HSet(ctx, key, fieldAnswer, rec.answer, fieldAlert, boolField(rec.alert), fieldLine, rec.line,
			fieldSilence, rec.silence).Err(); err != nil {
			return h.retry(p, "redis", err)
		}
		durable.Wrote(ctx, key)
		if err := h.cfg.Durable.Wait(ctx, key); err != nil {
			return h.retry(p, "redis", err)
		}
	}
	if !rec.answered {
		if err := h.answer(ctx, p, rec.answer, rec.alert); err != nil {
			return err
		}
		if err := h.rdb.HSet(ctx, key, fieldAnswered, "1").Err(); err != nil {
			return h.retry(p, "redis", err)
		}
	}
	if rec.line != "" && !rec.edited {
		if err := h.edit(ctx, p, rec.line); err != nil {
			return err
		}
		if err := h.rdb.HSet(ctx, key, fieldEdited, "1").Err(); err != nil {
			return h.retry(p, "redis", err)
		}
	}
	if err := h.rdb.HSet(ctx, key, fieldDone, "1").Err(); err != nil {
		return h.retry(p, "redis", err)
	}
	return nil
}

// claim records the press for p's task, and settles whether the task
// answers it (see claimScript). stop is set when there is nothing (more)
// to do: the press is another task's, or this task finished it.
func (h *handler) claim(ctx context.Context, p *press, key string) (stop bool, err error) {
	res, err := claimScript.Run(ctx, h.rdb, []string{key}, p.task.ID, p.action, h.cfg.PressRetention.Milliseconds()).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return true, h.retry(p, "redis", fmt.Errorf("record the press: %w", err))
	}
	switch res[0] {
	case 0:
		// Telegram delivered the press again. Its first task answers it,
		// with the outcome: an answer from here could come first, with
		// the wrong text, and Telegram takes one answer only.
		p.log.Info("the press was delivered again; another task handles and answers it")
		h.count(p, p.action, outcomeDuplicate)
		return true, nil
	case 3:
		return true, nil
	case 2:
		p.resumed = true
	}
	p.recorded = true
	p.answerClaimed, p.answerer = true, res[1] == 1
	return false, nil
}

// loadRecord reads the press record.
func (h *handler) loadRecord(ctx context.Context, key string) (record, error) {
	m, err := h.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return record{}, err
	}
	return record{
		answer: m[fieldAnswer], alert: m[fieldAlert] == "1", line: m[fieldLine], silence: m[fieldSilence], incident: m[fieldIncident],
		answered: m[fieldAnswered] == "1", edited: m[fieldEdited] == "1",
	}, nil
}

func boolField(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// act does the press's action and fills in rec's answer and line.
func (h *handler) act(ctx context.Context, p *press, rec *record) error {
	if p.action == buttons.Ack {
		return h.acknowledge(ctx, p, rec)
	}
	return h.silence(ctx, p, rec)
}

// ack is an acknowledgement as keys.Space.Acknowledged stores it.
type ack struct {
	By     string    `json:"by"`
	UserID int64     `json:"user_id"`
	At     time.Time `json:"at"`
	// Query is the callback query that acknowledged.
	Query string `json:"query"`
}

// acknowledge stores the first acknowledgement of the thread; a later one
// is told who came first and changes nothing.
func (h *handler) acknowledge(ctx context.Context, p *press, rec *record) error {
	now := h.cfg.Now()
	key := p.keys.Acknowledged(p.subj.Chat, p.incident)
	body, err := json.Marshal(ack{By: p.by(), UserID: p.q.From.ID, At: now.UTC(), Query: p.q.ID})
	if err != nil {
		return broker.Archive("encode", err)
	}
	first, err := h.rdb.SetNX(ctx, key, body, h.cfg.AckRetention).Result()
	if err != nil {
		return h.retry(p, "redis", err)
	}
	durable.Wrote(ctx, key)
	if !first {
		raw, err := h.rdb.Get(ctx, key).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return h.retry(p, "redis", err)
		}
		var prev ack
		_ = json.Unmarshal(raw, &prev)
		if prev.Query != p.q.ID {
			// Someone else was first (or the record expired between the
			// two calls: then say so without a name).
			msg := "Already acknowledged"
			if prev.By != "" {
				msg += " by " + prev.By + " at " + clock(prev.At, now)
			}
			rec.answer = msg
			h.count(p, p.action, outcomeAccepted)
			p.log.Info("acknowledgement of an alert acknowledged already", "first_by", prev.By)
			return nil
		}
		// This press stored it on an earlier attempt.
		now = prev.At
	}
	fired, err := h.stopEscalation(ctx, p, now)
	if err != nil {
		return h.retry(p, "redis", err)
	}
	rec.answer, rec.line = answerAcknowledged, ackLine(p.by(), now, h.cfg.Now(), fired)
	if line := h.silenceAtSource(ctx, p, now); line != "" {
		rec.line += "\n" + line
	}
	h.count(p, p.action, outcomeAccepted)
	p.log.Info("alert acknowledged")
	return nil
}

// stopEscalation stops the escalation of the acknowledged alert, when it
// has one, and returns when the alert fired: the escalation's record says
// so, else the subject does (zero when neither knows).
func (h *handler) stopEscalation(ctx context.Context, p *press, at time.Time) (time.Time, error) {
	fired := p.subj.Fired
	if h.cfg.Escalations == nil || p.subj.ThreadKey == "" {
		return fired, nil
	}
	a, err := h.cfg.Escalations.Acknowledge(ctx, escalation.Ack{Bot: p.bot, Chat: p.subj.Chat, Thread: p.subj.ThreadKey, By: p.by(), At: at})
	if err != nil {
		return time.Time{}, err
	}
	if a.First {
		p.log.Info("the alert's escalation stopped", "policy", a.Policy)
	}
	if !a.FiredAt.IsZero() {
		fired = a.FiredAt
	}
	return fired, nil
}

// silence creates the silence of a silence button.
func (h *handler) silence(ctx context.Context, p *press, rec *record) error {
	d := buttons.SilenceFor(p.action)
	if h.cfg.Silences == nil {
		p.log.Warn("silence press, but this worker has no silences store")
		rec.answer, rec.alert = answerNoSilences, true
		h.count(p, p.action, outcomeFailed)
		return nil
	}
	comment := silenceComment(p.subj.Alert, d, p.q.ID)
	var sil silences.Silence
	found := false
	if p.resumed {
		// An earlier attempt may have created the silence and stopped
		// before noting it: find it by the press named in its comment.
		list, err := h.cfg.Silences.List(ctx, silences.FilterLive)
		if err != nil {
			return h.retry(p, "silences", err)
		}
		for _, s := range list {
			if s.Comment == comment {
				sil, found = s, true
				break
			}
		}
	}
	if !found {
		matchers := make([]silences.Matcher, len(p.subj.Matchers))
		for i, m := range p.subj.Matchers {
			matchers[i] = silences.Matcher{Name: m.Name, Value: m.Value}
		}
		var err error
		sil, err = h.cfg.Silences.Create(ctx, silences.Input{
			Matchers: matchers, Duration: d, Comment: comment, CreatedBy: p.by() + " (Telegram)",
		})
		var verr *jobs.ValidationError
		switch {
		case errors.As(err, &verr):
			p.log.Error("the alert's silence was refused; check the route's matchers", "error", err)
			rec.answer, rec.alert = truncateAnswer("This alert cannot be silenced: "+verr.Error()), true
			h.count(p, p.action, outcomeFailed)
			return nil
		case errors.Is(err, silences.ErrTooMany):
			p.log.Warn("silence not created: too many silences in force", "error", err)
			rec.answer, rec.alert = answerTooMany, true
			h.count(p, p.action, outcomeFailed)
			return nil
		case err != nil:
			return h.retry(p, "silences", err)
		}
	}
	now := h.cfg.Now()
	rec.answer = "Silenced for " + span(d)
	rec.line = silenceLine(p.by(), d, sil.EndsAt, now)
	rec.silence = sil.ID
	h.count(p, p.action, outcomeAccepted)
	p.log.Info("alert silenced", "silence", sil.ID, "ends_at", sil.EndsAt)
	return nil
}

// truncateAnswer keeps an answer within Telegram's 200 characters.
func truncateAnswer(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}

// edit queues the edit that shows the press's line (with the lines of
// earlier presses) below the alert's text, keeping the buttons that still
// apply. It edits the first message of the alert's thread while the thread
// is open; once it is closed (the alert resolved) or when the alert has
// none, the message pressed. The edit's idempotency key is the press: a
// retried attempt does not queue a second one.
func (h *handler) edit(ctx context.Context, p *press, line string) error {
	s := p.subj
	lines, err := noteScript.Run(ctx, h.rdb, []string{p.keys.CallbackQuery(p.q.ID), p.keys.PressLines(s.Chat, p.incident)},
		line, h.cfg.AckRetention.Milliseconds(), h.cfg.MaxLines).StringSlice()
	if err != nil {
		return h.retry(p, "redis", err)
	}
	thread, record, err := h.editTarget(ctx, p)
	switch {
	case err != nil:
		return h.retry(p, "redis", err)
	case thread == nil:
		p.log.Info("no message to edit: the alert has no thread and the press names no message")
		return nil
	}
	limit := markup.MaxMessageLen
	if strings.HasSuffix(record, ":p") {
		limit = telegram.MaxCaption
	}
	acked, err := h.rdb.Exists(ctx, p.keys.Acknowledged(s.Chat, p.incident)).Result()
	if err != nil {
		return h.retry(p, "redis", err)
	}
	text, mode := editText(s.Text, s.ParseMode, lines, limit)
	msg := jobs.SendMessage{
		Bot: p.bot, Chat: s.Chat, Text: text, ParseMode: mode, Thread: thread,
		Buttons:        remainingButtons(s, p.ref, acked > 0),
		IdempotencyKey: "telegram-press:" + p.bot + ":" + p.q.ID,
	}
	res, err := h.cfg.Edits.Enqueue(ctx, jobs.Request{Message: msg, Queue: h.cfg.EditQueue})
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		p.log.Error("the edit showing the press was refused; the message stays as it was", "error", err)
		return nil
	case err != nil:
		return h.retry(p, "redis", err)
	}
	p.log.Debug("edit of the alert's message queued", "thread", thread.Key, "edit_task", res.TaskID, "duplicate", res.Duplicate)
	return nil
}

// editTarget is the thread whose first message the edit replaces, with
// that thread's record (keys.Space.Thread): the alert's own while it is
// open; else a thread of the pressed message alone ("press/<message id>"),
// recorded here for the worker's edit, unless that is a direct message.
// Nil when there is neither.
func (h *handler) editTarget(ctx context.Context, p *press) (*jobs.Thread, string, error) {
	s := p.subj
	if s.ThreadKey != "" {
		v, err := h.rdb.Get(ctx, p.keys.Thread(s.Chat, s.ThreadKey)).Result()
		switch {
		case err == nil:
			return &jobs.Thread{Key: s.ThreadKey, Mode: jobs.ThreadEdit}, v, nil
		case !errors.Is(err, redis.Nil):
			return nil, "", err
		}
	}
	m := p.q.Message
	if m == nil || m.MessageID <= 0 || p.direct {
		// A direct message is not the alert's: its text is not the
		// subject's to show.
		return nil, "", nil
	}
	kind := "t"
	if m.Text == "" {
		kind = "p" // a photo: its caption is edited
	}
	key := "press/" + strconv.Itoa(m.MessageID)
	record := strconv.Itoa(m.MessageID) + ":" + kind
	// Left to expire rather than closed by the edit: two presses in a row
	// both edit the same message through it.
	if err := h.rdb.Set(ctx, p.keys.Thread(s.Chat, key), record, h.cfg.PressRetention).Err(); err != nil {
		return nil, "", err
	}
	return &jobs.Thread{Key: key, Mode: jobs.ThreadEdit}, record, nil
}

// answer answers the press, unless another task (one that recorded it, or
// an earlier delivery) claimed its answer: Telegram takes one answer per
// query, and it must be the outcome's. A failure that may pass (a network error, a
// 5xx, a 429) is returned as a Retry when the next attempt still comes
// within AnswerWindow of the press's arrival; any other
// (the query is too old, or was answered: 400) is logged and dropped, as a
// retry could not succeed.
func (h *handler) answer(ctx context.Context, p *press, text string, alert bool) error {
	if !p.answerClaimed {
		n, err := answerClaimScript.Run(ctx, h.rdb, []string{p.keys.CallbackQuery(p.q.ID)}, p.task.ID,
			h.cfg.PressRetention.Milliseconds()).Int()
		if err != nil {
			return h.retry(p, "redis", fmt.Errorf("claim the answer: %w", err))
		}
		p.answerClaimed, p.answerer = true, n == 1
	}
	if !p.answerer {
		p.log.Info("another task answers this callback query; not answered here")
		return nil
	}
	err := p.api.AnswerCallback(ctx, p.q.ID, text, alert)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if te, _ := telegram.AsError(err); te != nil && te.Reason.Temporary() {
		d := h.backoff(p.task.Attempt)
		if te.RetryAfter > 0 {
			d = te.RetryAfter // never sooner than Telegram asks
		}
		if h.cfg.Now().Add(d).Sub(p.received) < h.cfg.AnswerWindow {
			return broker.Retry(d, "answer", err)
		}
	}
	p.log.Info("the press could not be answered; not retried", "error", err)
	return nil
}

// count adds a press to the metrics. Unknown, refused and duplicate
// presses count on their task's first attempt only (a retry after a failed
// answer is the same press); accepted and failed ones count when their
// action is done, which a retried attempt does not do again.
func (h *handler) count(p *press, action, outcome string) {
	if p.task.Attempt > 0 && outcome != outcomeAccepted && outcome != outcomeFailed {
		return
	}
	h.cfg.Metrics.Presses.WithLabelValues(p.bot, action, outcome).Inc()
}

// retry hands the task back after a failure that may pass (Redis). A
// press not recorded yet gives up after MaxRetry failures; a recorded one
// is never lost.
func (h *handler) retry(p *press, reason string, err error) error {
	if !p.recorded && p.task.Attempt >= h.cfg.MaxRetry {
		p.log.Error("press not recorded after every retry; dropped", "reason", reason, "error", err)
		return broker.Archive(reason, err)
	}
	p.log.Warn("press not finished; retrying", "reason", reason, "error", err)
	return broker.Retry(h.backoff(p.task.Attempt), reason, err)
}

// backoff is the wait before the next attempt after attempt failures:
// doubling from BackoffBase up to BackoffCap.
func (h *handler) backoff(attempt int) time.Duration {
	return backoff.Exp(h.cfg.BackoffBase, h.cfg.BackoffCap, attempt)
}
